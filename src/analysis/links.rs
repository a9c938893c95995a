//! Links between steps by verbatim value reuse, found with a multi-pattern index.

//! Unit tests of verification: hand-made ledgers, each breaking one rule.

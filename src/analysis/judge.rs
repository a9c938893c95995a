//! The optional judge: the trait the analysis asks, and how its answer becomes a finding.

//! Unit tests of the comparison on runs built step by step.

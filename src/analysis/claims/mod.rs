//! Splitting the final answer into claims and labelling each by its support.

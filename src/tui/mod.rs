//! The screen: a ratatui + crossterm app on a tokio event loop that renders the report and the
//! experiment state, and computes nothing of its own.

//! Reusable drawing parts: the dependency gutter, scrolling arithmetic, the selection bar, JSON
//! highlighting and the inert-text layer every piece of run text passes through.

pub mod graph_gutter;
pub mod inert_text;
pub mod json_view;
pub mod marks;
pub mod scroll_list;
pub mod selection;

//! The recorded run, `tdn.run/1` (docs/run-format.md), as plain Rust values.
//!
//! Holds the types every other layer reads: [`Run`], [`Step`], [`ContextUnit`], [`Tool`] and the
//! typed ids. Building a `Run` from untrusted JSON is the loader's job (`analysis::load`); importers
//! build one from other formats. Nothing here does I/O.

mod ids;
mod json;
mod json_keys;
pub mod json_string;
mod message;
mod names;
mod run;
mod shared_text;
mod step;
mod text;

pub use ids::{StepId, UnitId};
pub(crate) use json::last_value_first_place;
pub use json::{Json, JsonMap, JsonSeed};
pub use message::{Message, MessageCall, ModelCall, UnitAt, char_to_byte};
pub use names::{is_opaque_id, is_opaque_token, step_name, strip_word_prefix};
pub use run::{
    ContextUnit, Limits, ModelInfo, Run, RunStatus, SAME_ANSWER, StatusFrom, Tool, same_answer,
};
pub use shared_text::{SharedText, TextTable};
pub use step::{
    Decision, DecisionOption, Document, FINAL_ANSWER_TOOLS, LazyMap, MemoryOp, Step, StepContext,
    StepExtras, StepKind, Timestamp, ToolCall, Usage, decides, describe_step,
};
pub(crate) use text::next_hazard;
pub use text::{
    AsText, embedded_json, inert_block, inert_line, is_hazard, value_text, value_text_into,
};

/// The `format` string of a native run.
pub const RUN_FORMAT: &str = "tdn.run/1";

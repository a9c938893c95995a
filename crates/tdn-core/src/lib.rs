//! tdn-core: the analysis of an AI-agent run, as plain synchronous library code with no
//! terminal, process, async runtime or screen in it. See `docs/architecture.md`.

pub mod analysis;

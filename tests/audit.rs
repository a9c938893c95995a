//! An independent check of the built tool against its contracts, on inputs written for this
//! check alone: recorded runs of tests/fixtures/audit/ whose expected verdicts, faults and claim
//! labels were worked out from docs/how-it-decides.md (not from running the code), the command
//! contracts of docs/run-format.md, docs/report.md, docs/influence.md, docs/experiments.md and
//! docs/ledger.md, and hostile input end to end. Each module says which part it checks.

#[path = "audit/consent.rs"]
mod consent;
#[path = "audit/edges.rs"]
mod edges;
#[path = "audit/fuzz.rs"]
mod fuzz;
#[path = "audit/ledger.rs"]
mod ledger;
#[path = "audit/loader.rs"]
mod loader;
#[path = "audit/method.rs"]
mod method;
#[path = "audit/report.rs"]
mod report;
#[path = "audit/support.rs"]
mod support;
#[path = "audit/toolbox.rs"]
mod toolbox;
#[path = "audit/wording.rs"]
mod wording;

//! An independent check of the built tool against its contracts, on inputs written for this
//! check alone: recorded runs of tests/fixtures/audit/ whose expected verdicts, faults and claim
//! labels were worked out from docs/how-it-decides.md (not from running the code), the command
//! contracts of docs/run-format.md, docs/report.md and docs/influence.md, and hostile input end to
//! end. Each module says which part it checks.

#[path = "audit/contracts.rs"]
mod contracts;
#[path = "audit/hostile.rs"]
mod hostile;
#[path = "audit/method.rs"]
mod method;
#[path = "audit/support.rs"]
mod support;

//! Snapshots of real exports (tests/fixtures/import/real/, copied from bench/real/) at 80x24,
//! 120x40 and 160x50: a smolagents trace exported as OTLP with OpenInference spans, and a
//! Langfuse trace of the OpenAI Agents SDK. One test per view, so a failure names the view.
//! Read every `.snap` before accepting it.

use super::fixture::{press, screen};
use super::readable::{open_file, real};
use std::sync::Arc;
use tdn_tui::experiments::engine::ScriptedPort;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (160, 50)];
const EXPORTS: [(&str, &str); 2] = [
    ("smol", "otlp/evilmartians__smol_deep_research_agent.json"),
    (
        "agents",
        "langfuse/langfuse__openai-agents-2025-09-30.trace.json",
    ),
];

/// Snapshots `view` (the keys that show it) of every export at every size.
fn snapshot(view: &str, keys: &str) {
    for (name, file) in EXPORTS {
        for (w, h) in SIZES {
            let mut s = screen(
                open_file(&real(file)),
                (w, h),
                Arc::new(ScriptedPort::new("./my-agent.sh")),
            );
            press(&mut s, keys);
            insta::assert_snapshot!(format!("real_{name}_{w}x{h}_{view}"), s.screen());
        }
    }
}

#[test]
fn the_timeline_of_real_exports() {
    snapshot("timeline", "1");
}

#[test]
fn the_suspects_of_real_exports() {
    snapshot("suspects", "2");
}

#[test]
fn the_step_detail_of_real_exports() {
    snapshot("detail", "3");
}

#[test]
fn the_claims_of_real_exports() {
    snapshot("claims", "5");
}

#[test]
fn the_waterfall_of_real_exports() {
    snapshot("waterfall", "w");
}

#[test]
fn the_experiments_of_real_exports() {
    snapshot("experiments", "6");
}

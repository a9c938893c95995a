//! How long `analyze` takes on generated runs of 10,000 and 100,000 steps (docs/how-it-decides.md
//! lists the numbers and the command: `cargo bench --bench analyze`). The runs mix user, model,
//! tool, retrieval, memory and decision steps, reuse ids, dates, amounts and sentences across
//! steps (so the link index has work to do), and carry failures, outdated sources and loops.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;
use tdn_tui::analysis::import::SourceFormat;
use tdn_tui::analysis::load::Loaded;
use tdn_tui::analysis::model::{
    Document, MemoryOp, Run, RunStatus, Step, StepKind, Tool, ToolCall,
};
use tdn_tui::analysis::report::{AnalyzeOptions, analyze};
use tdn_tui::config::Settings;

fn generated(n: usize) -> Loaded {
    let mut run = Run::new(format!("bench-{n}"), RunStatus::Failed);
    run.task = Some("Refund order ORD-1042 and book a call for 2026-11-06".to_owned());
    run.final_answer = Some(
        "Your refund of $120 for ORD-1042 has been issued. The call is booked for 2026-11-06. Thanks!"
            .to_owned(),
    );
    for (name, mutates) in [
        ("get_order", false),
        ("issue_refund", true),
        ("create_event", true),
    ] {
        run.tools.push(Tool {
            name: name.to_owned(),
            description: Some(format!("{} things", name.replace('_', " "))),
            parameters: Some(json!({"type": "object", "properties": {"id": {"type": "string"}}})),
            mutates,
        });
    }
    for i in 0..n {
        let order = format!("ORD-{}", 1000 + i % 3000);
        let id = format!("s{i}");
        let mut s = match i % 8 {
            0 => {
                let mut s = Step::new(id, StepKind::User);
                s.output = Some(json!(format!(
                    "Please look at {order} from 2026-0{}-1{}",
                    1 + i % 9,
                    i % 10
                )));
                s
            }
            1 | 4 => {
                let mut s = Step::new(id, StepKind::Llm);
                s.input = Some(json!(format!(
                    "Context about {order}: the customer paid ${} for it.",
                    100 + i % 500
                )));
                s.output =
                    Some(json!({"tool_call": {"name": "get_order", "arguments": {"id": order}}}));
                s
            }
            2 | 5 => {
                let mut s = Step::new(id, StepKind::Tool);
                let name = if i % 40 == 5 {
                    "issue_refund"
                } else {
                    "get_order"
                };
                s.tool = Some(ToolCall {
                    name: name.to_owned(),
                    arguments: json!({"id": order}),
                    call_id: None,
                });
                if i % 23 == 2 {
                    s.error = Some(format!("order {order} not found"));
                } else {
                    s.output =
                        Some(json!({"id": order, "total": 100 + i % 500, "status": "shipped"}));
                }
                s
            }
            3 => {
                let mut s = Step::new(id, StepKind::Retrieval);
                s.input = Some(json!("refund policy for annual plans"));
                s.documents = Some(vec![Document {
                    id: Some(format!("doc-{}", i % 50)),
                    text: format!(
                        "Refund policy {}: annual plans cancelled within 30 days are refunded ${}.",
                        2020 + i % 6,
                        100 + i % 40
                    ),
                    source: None,
                    outdated: i % 6 == 3,
                }]);
                s
            }
            6 => {
                let mut s = Step::new(
                    id,
                    if i % 16 == 6 {
                        StepKind::MemoryWrite
                    } else {
                        StepKind::MemoryRead
                    },
                );
                s.memory = Some(MemoryOp {
                    key: format!("pref-{}", i % 20),
                    value: json!(format!("prefers option {}", i % 3)),
                });
                s
            }
            _ => {
                let mut s = Step::new(id, StepKind::Llm);
                s.output = Some(json!(format!(
                    "The refund for {order} is ${} and the call is on 2026-11-06.",
                    100 + i % 40
                )));
                s
            }
        };
        s.agent = Some("support".to_owned());
        run.steps.push(s);
    }
    run.reindex();
    Loaded {
        run,
        warnings: Vec::new(),
        source_format: SourceFormat::Native,
    }
}

fn bench(c: &mut Criterion) {
    let settings = Settings::default();
    let embedder = tdn_tui::experiments::embedder::from_settings(&settings);
    let mut group = c.benchmark_group("analyze");
    group.sample_size(10);
    for n in [10_000usize, 100_000] {
        let loaded = generated(n);
        let opts = AnalyzeOptions::new(embedder.as_ref());
        group.throughput(Throughput::Elements(u64::try_from(n).unwrap_or(u64::MAX)));
        group.bench_with_input(BenchmarkId::from_parameter(n), &loaded, |b, l| {
            b.iter(|| black_box(analyze(l, &opts)));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

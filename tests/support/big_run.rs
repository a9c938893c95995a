//! Generated runs of any size, with a report that gives every pane content, for the screen's
//! tests and its keypress benchmark. Test support only; no assertions here.

use tdn_tui::analysis::influence::{RankingConfidence, Signals};
use tdn_tui::analysis::model::{ContextUnit, StepId, UnitId};
use tdn_tui::analysis::model::{
    Run, RunStatus, Step, StepContext, StepKind, Timestamp, ToolCall, Usage,
};
use tdn_tui::analysis::report::{
    Claim, DroppedEntry, DroppedSection, DroppedStep, Fault, InfluenceEntry, InfluenceSection,
    Link, Party, REPORT_FORMAT, Report, Role, RunSummary, SupportLabel, Suspect, VerdictStep,
};
use tdn_tui::tui::app::Document;

/// A generated run of `n` steps: kinds in turn, every tenth step a parent of the nine after it,
/// an error every 97 steps, timings and tokens, a context record on model steps, and a long
/// text message on agent steps.
pub fn big_run(n: usize) -> Run {
    let mut run = Run::new(format!("big-{n}"), RunStatus::Failed);
    run.final_answer = Some("the generated answer".to_owned());
    run.context_units = (0..4)
        .map(|u| ContextUnit {
            id: UnitId(format!("u{u}")),
            kind: "document".to_owned(),
            text: format!("generated unit {u}"),
            ..ContextUnit::default()
        })
        .collect();
    let kinds = [
        StepKind::Llm,
        StepKind::Tool,
        StepKind::Retrieval,
        StepKind::Agent,
    ];
    for i in 0..n {
        let kind = kinds[i % kinds.len()];
        let mut s = Step::new(format!("s{i}"), kind);
        s.name = Some(format!("step number {i}"));
        if i % 10 != 0 {
            s.parent = Some(StepId(format!("s{}", i - i % 10)));
        }
        if i % 97 == 96 {
            s.error = Some(format!("generated failure at {i}"));
        }
        if kind == StepKind::Tool {
            s.tool = Some(Box::new(ToolCall {
                name: "lookup".to_owned(),
                arguments:
                    serde_json::json!({"q": i, "text": "some words to wrap in the detail pane"})
                        .into(),
                call_id: None,
            }));
        }
        if kind == StepKind::Llm {
            s.context = Some(Box::new(StepContext {
                available: Some((0..4).map(|u| UnitId(format!("u{u}"))).collect()),
                sent: (0..3).map(|u| UnitId(format!("u{u}"))).collect(),
            }));
        }
        s.output = Some(if kind == StepKind::Agent {
            // A multi-agent message: the timeline shows its start after the label.
            serde_json::json!(format!(
                "Message {i}: the next speaker reports on the plan. {}",
                "A long multi-agent message goes on. ".repeat(20)
            ))
            .into()
        } else {
            serde_json::json!({"answer": format!("value {i}"), "n": i}).into()
        });
        s.extras_mut().usage = Some(Usage {
            input_tokens: Some(100 + (i as u64 % 900)),
            output_tokens: Some(20),
            ..Usage::default()
        });
        s.extras_mut().started_at = Some(Timestamp(1_700_000_000_000 + i as i64 * 10));
        s.extras_mut().ended_at = Some(Timestamp(1_700_000_000_000 + i as i64 * 10 + 7));
        run.steps.push(s);
    }
    run.reindex();
    run
}

/// A report for [`big_run`]: a suspect per failed step, links to the next steps, a few claims,
/// an influence ranking and dropped context at every model step.
pub fn big_report(run: &Run) -> Report {
    let n = run.steps.len();
    let failed: Vec<&Step> = run.steps.iter().filter(|s| s.failed()).collect();
    let suspects: Vec<Suspect> = failed
        .iter()
        .enumerate()
        .map(|(r, s)| Suspect {
            rank: r + 1,
            step: s.id.to_string(),
            name: None,
            index: s.index,
            category: "tool_error".to_owned(),
            detector: "tool_errors".to_owned(),
            title: format!("generated failure at {}", s.index),
            score: 0.9 - r as f64 * 0.001,
            confidence: 0.9,
            role: Role::Suspect,
            cause: None,
            evidence: vec![format!("step {} failed", s.index + 1)],
            similar: Vec::new(),
        })
        .collect();
    let links = (0..n.saturating_sub(5))
        .filter(|i| i % 3 == 0)
        .flat_map(|i| {
            [
                Link {
                    from: format!("s{i}"),
                    to: format!("s{}", i + 1),
                    value: "v".to_owned(),
                },
                Link {
                    from: format!("s{i}"),
                    to: format!("s{}", i + 5),
                    value: "w".to_owned(),
                },
            ]
        })
        .collect();
    let llm_steps: Vec<&Step> = run
        .steps
        .iter()
        .filter(|s| s.kind == StepKind::Llm)
        .collect();
    Report {
        format: REPORT_FORMAT.to_owned(),
        run: RunSummary {
            id: run.id.clone(),
            title: None,
            task: None,
            status: run.status,
            status_from: run.status_from,
            status_why: run.status_why.clone(),
            steps: n,
            source_format: "tdn.run/1".to_owned(),
            warnings: Vec::new(),
        },
        verdict: suspects.first().map(|s| VerdictStep {
            step: s.step.clone(),
            name: s.name.clone(),
            index: s.index,
            category: s.category.clone(),
            title: s.title.clone(),
            evidence: s.evidence.clone(),
        }),
        fault: Fault {
            party: Party::Agent,
            why: "generated".to_owned(),
        },
        confidence: RankingConfidence {
            clear_winner: false,
            margin: Some(0.001),
            lead: suspects.first().map(|s| s.step.clone()),
            shortlist: suspects.iter().take(3).map(|s| s.step.clone()).collect(),
            strategy: "margin>=0.05".to_owned(),
            reason: "generated".to_owned(),
        },
        suspects,
        leads: Vec::new(),
        links,
        claims: vec![Claim {
            text: "the generated answer".to_owned(),
            label: SupportLabel::Unsupported,
            evidence_step: None,
            origin_step: run.steps.last().map(|s| s.id.to_string()),
            origin_index: run.steps.last().map(|s| s.index),
            origin_name: None,
            why: "no source says it".to_owned(),
            evidence_text: None,
        }],
        influence: Some(InfluenceSection {
            ranked_by: "semantic".to_owned(),
            embedder: Some("hashed".to_owned()),
            scores: (0..4)
                .map(|u| InfluenceEntry {
                    id: format!("u{u}").into(),
                    unit: Some(format!("u{u}").into()),
                    step: None,
                    score: 0.5 - f64::from(u) * 0.1,
                    signals: Signals::default(),
                    weights: None,
                    adapted: None,
                    probe: None,
                })
                .collect(),
            confidence: RankingConfidence {
                clear_winner: true,
                margin: Some(0.1),
                lead: Some("u0".to_owned()),
                shortlist: vec!["u0".to_owned()],
                strategy: "margin>=0.05".to_owned(),
                reason: "generated".to_owned(),
            },
        }),
        dropped: Some(DroppedSection {
            dropped: vec![DroppedEntry {
                id: "u3".to_owned(),
                content: Some("generated unit 3".to_owned()),
                probe: None,
            }],
            available_count: 4,
            sent_count: 3,
            any_dropped: true,
            reason: "generated".to_owned(),
            steps: llm_steps
                .iter()
                .map(|s| DroppedStep {
                    step: s.id.to_string(),
                    index: s.index,
                    dropped: vec!["u3".to_owned()],
                    available_count: 4,
                    sent_count: 3,
                    any_dropped: true,
                })
                .collect(),
        }),
        judge: None,
        against: None,
        cost: None,
        experiments: None,
    }
}

/// A generated document of `n` steps.
pub fn big(n: usize) -> Document {
    let run = big_run(n);
    let report = big_report(&run);
    Document::new(run, report, None)
}

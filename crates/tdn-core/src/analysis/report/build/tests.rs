//! The whole analysis on small runs: the spec's Friday example (spec/report.md), the fault
//! rules, the judge through fake judges, and the report's JSON round trip.

use super::*;
use crate::analysis::import::SourceFormat;
use crate::analysis::influence::EmbedError;
use crate::analysis::judge::{JudgeError, JudgeRequest};
use crate::analysis::model::{RunStatus, inert_line};
use crate::analysis::report::{Party, SupportLabel, render_json, render_text};
use crate::analysis::testutil::RunBuilder;
use serde_json::{Value, json};
use std::sync::Mutex;

struct NoEmbedder;

impl Embedder for NoEmbedder {
    fn name(&self) -> &str {
        "none"
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        Ok(texts.iter().map(|_| vec![1.0]).collect())
    }
}

fn loaded(run: Run) -> Loaded {
    Loaded {
        run,
        warnings: Vec::new(),
        source_format: SourceFormat::Native,
    }
}

fn report(run: Run) -> Report {
    analyze(&loaded(run), &AnalyzeOptions::new(&NoEmbedder))
}

/// The example of spec/run-format.md.
fn spec_friday() -> Run {
    RunBuilder::failed()
        .task("Book a 30 minute call with Dana next Friday at 10")
        .answer("Your call with Dana is booked.")
        .tool_def(
            "create_event",
            "",
            json!({"type": "object", "required": ["start"], "properties": {"start": {"type": "string", "format": "date-time"}}}),
            true,
        )
        .user("s1", "Book a 30 minute call with Dana next Friday at 10")
        .llm("s2", json!({"tool_call": {"name": "create_event", "arguments": {"start": "Friday"}}}))
        .tool_err("s3", "create_event", json!({"start": "Friday"}), "invalid start: 'Friday' is not a date-time")
        .llm("s4", "Your call with Dana is booked.")
        .build()
}

#[test]
fn the_spec_friday_example_gives_the_spec_report() {
    let r = report(spec_friday());
    let v = r.verdict.as_ref().unwrap();
    assert_eq!(
        (v.step.as_str(), v.index, v.category.as_str()),
        ("s2", 1, "wrong_value")
    );
    let s = &r.suspects;
    assert_eq!(
        (
            s[0].step.as_str(),
            s[0].detector.as_str(),
            s[0].role,
            s[0].score
        ),
        (
            "s2",
            "tool_errors",
            Role::RootCause,
            round6(
                crate::analysis::params::WALK_BACK_NAMED
                    * crate::analysis::params::ROOT_CAUSE_FACTOR
            )
        )
    );
    assert_eq!(
        s[0].evidence[0],
        "its output flows into step 's3' (position 3), where the failure surfaced"
    );
    // The failed call only showed the decision's effect: it is not listed, and the cause's
    // evidence says what showed there.
    assert!(s.iter().all(|x| x.step != "s3"), "{s:#?}");
    assert!(
        s[0].evidence.iter().any(|e| e
            == "the tool's error names 'Friday': 'invalid start: 'Friday' is not a date-time'"),
        "{:#?}",
        s[0].evidence
    );
    // The answer that says the failed booking worked is the model's own words: listed, with
    // the booking decision as its cause.
    assert_eq!(
        (s[1].step.as_str(), s[1].category.as_str(), s[1].role),
        ("s4", "contradicted_claim", Role::Symptom)
    );
    assert_eq!(s[1].cause.as_deref(), Some("s2"));
    assert_eq!(
        r.links,
        vec![Link {
            from: "s2".into(),
            to: "s3".into(),
            value: "Friday".into()
        }]
    );
    assert_eq!(r.claims.len(), 1);
    assert_eq!(r.claims[0].label, SupportLabel::Contradicted);
    assert_eq!(
        (
            r.claims[0].evidence_step.as_deref(),
            r.claims[0].origin_step.as_deref()
        ),
        (Some("s3"), Some("s4"))
    );
    assert_eq!(r.fault.party, Party::Agent);
    assert_eq!(r.judge, None);
    assert_eq!(
        s.iter().map(|x| x.rank).collect::<Vec<_>>(),
        (1..=s.len()).collect::<Vec<_>>()
    );
}

#[test]
fn the_report_round_trips_through_json() {
    let r = report(spec_friday());
    let text = render_json(&r);
    assert!(text.ends_with('\n') && !text.trim_end().contains('\n'));
    let back: Report = serde_json::from_str(&text).unwrap();
    assert_eq!(back, r);
}

#[test]
fn fault_is_none_exactly_for_succeeded_and_unfinished_for_unfinished() {
    let ok = report(
        RunBuilder::succeeded()
            .user("s1", "hi")
            .tool_err("s2", "x", json!({}), "boom")
            .build(),
    );
    assert_eq!(ok.fault.party, Party::None);
    let wait = report(
        RunBuilder::new(RunStatus::Unfinished)
            .tool_err("s1", "x", json!({}), "boom")
            .llm("s2", "Which order?")
            .build(),
    );
    assert_eq!(wait.fault.party, Party::Unfinished);
    let crashed = report(RunBuilder::new(RunStatus::Error).user("s1", "hi").build());
    assert_eq!(crashed.fault.party, Party::Agent);
    // The crash names no step: its last step is a lead, not a suspect or the verdict.
    assert!(crashed.verdict.is_none());
    assert_eq!(
        crashed.leads.first().map(|l| l.category.as_str()),
        Some("run_error")
    );
}

#[test]
fn a_user_whose_details_never_match_is_at_fault() {
    let run = RunBuilder::failed()
        .tool_def("lookup", "", json!(null), false)
        .user("s1", "My email is kim@example.org")
        .llm("s2", json!({"email": "kim@example.org"}))
        .tool_err(
            "s3",
            "lookup",
            json!({"email": "kim@example.org"}),
            "no customer found for kim@example.org",
        )
        .build();
    assert_eq!(report(run).fault.party, Party::User);
    let typo = RunBuilder::failed()
        .user("s1", "My email is kim@example.org")
        .llm("s2", json!({"email": "kim@exmaple.org"}))
        .tool_err(
            "s3",
            "lookup",
            json!({"email": "kim@exmaple.org"}),
            "no customer found for kim@exmaple.org",
        )
        .build();
    assert_eq!(
        report(typo).fault.party,
        Party::Agent,
        "the agent mistyped it"
    );
}

#[test]
fn a_user_who_declines_the_offer_is_at_fault_unless_something_changed() {
    let base = || {
        RunBuilder::failed()
            .tool_def("change_flight", "", json!(null), true)
            .user("s1", "Move my flight")
            .llm("s2", "Would you like the 8:05 flight for a $75 fee?")
            .user("s3", "No thanks, I'll keep my flight.")
    };
    assert_eq!(report(base().build()).fault.party, Party::User);
    let changed = base()
        .tool_ok("s4", "change_flight", json!({"to": "UA1210"}), json!("ok"))
        .build();
    assert_eq!(report(changed).fault.party, Party::Agent);
}

#[test]
fn a_user_who_says_go_ahead_declines_nothing() {
    let run = |answer: &str| {
        RunBuilder::failed()
            .tool_def("change_flight", "", json!(null), true)
            .user("s1", "Move my flight")
            .llm("s2", "Would you like the 8:05 flight for a $75 fee?")
            .user("s3", answer)
            .build()
    };
    let yes = report(run(
        "Alright, go ahead and change it. I don't want to miss my meeting.",
    ));
    assert_eq!(yes.fault.party, Party::Agent, "{:?}", yes.fault);
    let no = report(run("No, don't go ahead. I don't want the 8:05."));
    assert_eq!(no.fault.party, Party::User, "{:?}", no.fault);
}

struct FakeJudge {
    answer: Result<Value, JudgeError>,
    asked: Mutex<Vec<JudgeRequest>>,
}

impl FakeJudge {
    fn new(answer: Result<Value, JudgeError>) -> Self {
        FakeJudge {
            answer,
            asked: Mutex::new(Vec::new()),
        }
    }
}

impl Judge for FakeJudge {
    fn ask(&self, request: &JudgeRequest) -> Result<Value, JudgeError> {
        if let Ok(mut a) = self.asked.lock() {
            a.push(request.clone());
        }
        self.answer.clone()
    }
}

fn wrong_order() -> Run {
    RunBuilder::failed()
        .tool_def("issue_refund", "", json!(null), true)
        .user("s1", "Refund order ORD-2210")
        .llm("s2", "Plan: refund order ORD-2211.")
        .llm(
            "s3",
            json!({"tool_call": {"name": "issue_refund", "arguments": {"order_id": "ORD-2211"}}}),
        )
        .tool_ok(
            "s4",
            "issue_refund",
            json!({"order_id": "ORD-2211"}),
            json!({"status": "approved"}),
        )
        .build()
}

fn judged(run: Run, judge: &FakeJudge) -> Report {
    let mut opts = AnalyzeOptions::new(&NoEmbedder);
    opts.judge = Some(judge);
    analyze(&loaded(run), &opts)
}

#[test]
fn a_good_judge_answer_becomes_the_top_finding_capped_at_0_9() {
    let j = FakeJudge::new(Ok(
        json!({"step": "s2", "reason": "refunded the wrong order", "confidence": 0.97}),
    ));
    let r = judged(wrong_order(), &j);
    assert_eq!(j.asked.lock().unwrap().len(), 1);
    let req = &j.asked.lock().unwrap()[0];
    // The judge reads the leads too: here the first change, which is no suspect.
    assert_eq!(req.findings[0].category, "point_of_no_return");
    let top = &r.suspects[0];
    assert_eq!(
        (top.step.as_str(), top.detector.as_str(), top.score),
        ("s3", "judge", 0.9)
    );
    assert!(top.evidence.iter().any(|e| e
        == "plan first proposed at step 's2' (position 2); carried out by the call at step 's4' (position 4), made at step 's3' (position 3)"));
    assert!(
        top.evidence
            .iter()
            .any(|e| e == "the rules found no suspect")
    );
    let outcome = r.judge.unwrap();
    assert_eq!((outcome.step.as_deref(), outcome.error), (Some("s3"), None));
    // The finding moved from the step the judge named to the decision that made the refund
    // call: both are said, and why.
    assert_eq!(outcome.named.as_deref(), Some("s2"));
    assert_eq!(
        outcome.moved_because.as_deref(),
        Some(
            "the plan proposed at step 's2' (position 2) was carried out at step 's3' (position 3)"
        )
    );
}

#[test]
fn a_failing_or_nonsensical_judge_leaves_the_rules_verdict_standing() {
    let rules = report(wrong_order());
    for answer in [
        Err(JudgeError(
            "the judge command timed out after 60.0 s".to_owned(),
        )),
        Ok(json!({"step": "s99", "reason": "x"})),
        Ok(json!({"step": "s2"})),
    ] {
        let j = FakeJudge::new(answer);
        let r = judged(wrong_order(), &j);
        assert_eq!(r.suspects, rules.suspects);
        assert_eq!(r.fault, rules.fault);
        let o = r.judge.unwrap();
        assert_eq!((o.step, o.reason), (None, None));
        assert!(o.error.is_some_and(|e| !e.is_empty()));
    }
}

#[test]
fn the_judge_is_not_asked_when_the_rules_are_sure_or_the_run_succeeded() {
    let j = FakeJudge::new(Ok(json!({"step": "s1", "reason": "x"})));
    let r = judged(spec_friday(), &j);
    assert!(j.asked.lock().unwrap().is_empty());
    assert_eq!(r.judge, None);
    let ok = RunBuilder::succeeded().user("s1", "hi").build();
    let r = judged(ok, &j);
    assert!(j.asked.lock().unwrap().is_empty());
    assert_eq!(r.judge, None);
}

#[test]
fn hostile_text_is_inert_in_text_and_json_output() {
    let evil = "s\u{1b}[2J\u{9b}31m\u{202e}x";
    let run = RunBuilder::failed()
        .answer(evil)
        .user(evil, evil)
        .llm("s2", json!({"start": evil}))
        .tool_err("s3", evil, json!({"start": evil}), evil)
        .build();
    let r = report(run);
    let text = render_text(&r);
    assert!(
        !text
            .chars()
            .any(|c| c == '\u{1b}' || c == '\u{9b}' || c == '\u{202e}'),
        "{text}"
    );
    let json = render_json(&r);
    assert!(
        !json
            .chars()
            .any(|c| c == '\u{1b}' || c == '\u{9b}' || c == '\u{202e}')
    );
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back.claims[0].text, evil);
    assert_eq!(inert_line(&back.claims[0].text), inert_line(evil));
}

#[test]
fn invisible_characters_are_escaped_in_json_output_and_read_back_intact() {
    // Zero-width space, byte-order mark, a tag character (outside the 16-bit plane).
    let evil = "look\u{200b}up\u{feff} \u{e0041}";
    let run = RunBuilder::failed()
        .answer(evil)
        .user("s1", evil)
        .tool_err("s2", evil, json!({"q": evil}), evil)
        .build();
    let json = render_json(&report(run));
    assert!(
        !json
            .chars()
            .any(|c| matches!(c, '\u{200b}' | '\u{feff}' | '\u{e0041}')),
        "{json}"
    );
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back.claims[0].text, evil);
}

#[test]
fn an_empty_run_has_no_verdict_and_no_panic() {
    let r = report(RunBuilder::failed().build());
    assert_eq!(r.verdict, None);
    assert!(r.suspects.is_empty());
    assert_eq!(r.fault.party, Party::Agent);
    assert!(render_text(&r).contains("No suspect"));
}

#[test]
fn scores_are_never_printed_in_the_text() {
    let text = render_text(&report(spec_friday()));
    for n in ["0.99", "0.72", "0.88", "99%", "72%"] {
        assert!(!text.contains(n), "{n} in {text}");
    }
    assert!(text.contains("correlation"));
}

proptest::proptest! {
    #[test]
    fn a_quoted_link_value_is_what_short_makes_of_it(
        v in "[a-zA-Z0-9 .@:/\t\n\u{7f}\u{85}\u{a0}\u{e9}\u{202e}\u{3000}-]{0,100}"
    ) {
        proptest::prop_assert_eq!(quoted_value(&v), short(&v, QUOTE_CHARS));
    }
}

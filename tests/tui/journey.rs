//! Issue 5's journey by keyboard at 80x24 on the refund fixture (a copy of the sample run the
//! stand-in agent has a scenario for): the top suspect, the influence entry whose unit is ablated,
//! the dropped unit that is restored, each verdict shown beside its item; the run list of a file
//! of several runs (filter, open, back to the list); and a sample held back while another
//! process holds the ledger's lock. Verdicts come from a scripted port, never computed here.

use super::fixture::{fixtures, headless, press, refund_scored, screen};
use std::path::Path;
use std::sync::Arc;
use tdn_tui::analysis::model::RunStatus;
use tdn_tui::analysis::report::Verdict;
use tdn_tui::experiments::engine::{Request, ScriptedPort, Target};
use tdn_tui::experiments::event::{Event, EventKind, JobId, Judged, SampleEnd, Saved};
use tdn_tui::experiments::session::ProbeId;
use tdn_tui::tui::action::Action;
use tdn_tui::tui::app::{App, AppOptions, Document, Overlay, Pane};
use tdn_tui::tui::effects::{Clipboard, EffectContext};
use tdn_tui::tui::headless::Headless;
use tdn_tui::tui::overlays::confirm::ConfirmState;
use tdn_tui::tui::panes::experiments::SampleState;
use tdn_tui::tui::panes::suspects::View;
use tdn_tui::tui::picker::RunChoice;

fn refund() -> Document {
    refund_scored(1.0)
}

/// A runner script under which removing 'policy-2019' and restoring 'policy-2024' both change
/// the answer, as the stand-in agent's scenario says.
fn port() -> Arc<ScriptedPort> {
    let mut p = ScriptedPort::new("python3 agents/stand_in.py");
    p.script = vec![
        (Target::Unit("policy-2019".into()), Verdict::Confirmed),
        (Target::Unit("policy-2024".into()), Verdict::Confirmed),
    ];
    Arc::new(p)
}

fn confirm(h: &Headless) -> Request {
    match &h.app.overlay {
        Some(Overlay::Confirm(ConfirmState::Run(c))) => c.request.clone(),
        other => panic!("no confirm box: {other:?}\n{}", h.screen()),
    }
}

#[test]
fn the_refund_fixture_is_the_sample_run_the_stand_in_agent_knows() {
    let read = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).expect("readable")).expect("JSON")
    };
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-runs");
    assert_eq!(
        read(&fixtures().join("refund.run.json")),
        read(&sample.join("refund-outdated-policy.json"))
    );
    let scenarios = read(&sample.join("agents/scenarios.json"));
    assert!(scenarios.get("refund-outdated-policy").is_some());
}

/// Issue 26: the sample folder's runner says which runs it re-runs, and those are exactly the
/// runs its stand-in has a scenario for (any other answered an error per sample).
#[test]
fn the_sample_runner_names_exactly_the_runs_the_stand_in_knows() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-runs");
    let toml: toml::Value = toml::from_str(
        &std::fs::read_to_string(sample.join("tdn.toml")).expect("the sample tdn.toml"),
    )
    .expect("TOML");
    let mut runs: Vec<String> = toml["runner"]["runs"]
        .as_array()
        .expect("[runner] runs")
        .iter()
        .map(|v| v.as_str().expect("a run id").to_owned())
        .collect();
    let scenarios: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(sample.join("agents/scenarios.json")).expect("scenarios"),
    )
    .expect("JSON");
    let mut known: Vec<String> = scenarios
        .as_object()
        .expect("an object of scenarios")
        .keys()
        .cloned()
        .collect();
    runs.sort();
    known.sort();
    assert_eq!(runs, known);
}

#[test]
fn at_80x24_the_influence_entry_is_ablated_and_the_dropped_unit_restored_by_keyboard() {
    let mut h = screen(refund(), (80, 24), port());
    // The run opens on its top suspect.
    let s = h.screen();
    assert!(s.contains("▶#1 ★ s3"), "{s}");
    assert!(s.contains("Clear winner: step 's3'"), "{s}");

    // One key shows the influence ranking, its top entry selected, within the 80x24 screen.
    press(&mut h, "i");
    let s = h.screen();
    assert!(s.contains("[Context influence (3)]"), "{s}");
    assert!(s.contains("▶1  ★ policy-2019"), "{s}");
    assert!(s.contains("correlation, not a cause"), "{s}");

    // Ablating it asks first, showing the command, then shows the verdict beside the entry.
    press(&mut h, "a");
    assert_eq!(
        confirm(&h),
        Request::Ablate(vec![Target::Unit("policy-2019".into())])
    );
    assert!(h.screen().contains("python3 agents/stand_in.py"));
    press(&mut h, "y");
    assert_eq!(h.app.focus, Pane::Experiments, "narrow: the job is shown");
    assert!(h.screen().contains("CAUSAL"), "{}", h.screen());
    press(&mut h, "2");
    assert_eq!(h.app.suspects.view, View::Context, "the pane kept its list");
    let s = h.screen();
    assert!(
        s.contains("✔ CAUSAL: removing it flipped the answer in 3/3"),
        "{s}"
    );

    // The restore key from here shows the dropped unit first; pressed again, it restores it.
    press(&mut h, "r");
    assert_eq!(h.app.focus, Pane::Dropped);
    assert!(h.app.overlay.is_none(), "nothing runs unseen");
    assert!(
        h.screen().contains("▶ - policy-2024 (document)"),
        "{}",
        h.screen()
    );
    press(&mut h, "r");
    assert_eq!(
        h.app.focus,
        Pane::Experiments,
        "consent is asked once a session"
    );
    assert_eq!(
        h.app.experiments.jobs[1].request,
        Request::Restore(vec!["policy-2024".into()])
    );
    press(&mut h, "4");
    let s = h.screen();
    assert!(s.contains("- policy-2024 (document) ✔ CAUSAL"), "{s}");
}

#[test]
fn a_sample_held_for_the_ledger_lock_is_said_to_wait_until_it_is_written() {
    let mut p = ScriptedPort::new("./agent.sh");
    p.hold = true;
    let mut h = screen(refund(), (80, 24), Arc::new(p));
    press(&mut h, "a y");
    let job = JobId(1);
    h.act(Action::Experiment(Arc::new(Event {
        job,
        kind: EventKind::SampleHeld {
            probe: ProbeId(0),
            seed: 0,
            why: "another process has held the lock on 'r.ledger.jsonl' for more than 10 s".into(),
        },
    })));
    assert!(matches!(
        h.app.experiments.jobs[0].probes[0].samples[0],
        SampleState::Held(_)
    ));
    let s = h.screen();
    assert!(s.contains("waiting for ledger lock"), "{s}");
    assert!(s.contains("⧗"), "{s}");
    let status = h.app.status.as_ref().expect("a message");
    assert!(
        status.problem && status.text.contains("waiting for ledger lock"),
        "{}",
        status.text
    );
    // Once written, the sample is shown as any other.
    h.act(Action::Experiment(Arc::new(Event {
        job,
        kind: EventKind::SampleFinished {
            probe: ProbeId(0),
            seed: 0,
            end: SampleEnd::Answered {
                judged: Judged {
                    output: "You will be refunded $120.".into(),
                    flipped: false,
                    similarity: Some(1.0),
                    cost: Default::default(),
                    replayed_call: None,
                },
                saved: Saved::yes(),
            },
            spent: Default::default(),
        },
    })));
    assert!(matches!(
        h.app.experiments.jobs[0].probes[0].samples[0],
        SampleState::Done(_)
    ));
    let s = h.screen();
    let pane: Vec<&str> = s.lines().filter(|l| l.starts_with('│')).collect();
    assert!(
        !pane.iter().any(|l| l.contains("waiting for ledger lock")),
        "{s}"
    );
    assert!(s.contains("You will be refunded $120."), "{s}");
}

fn choice(id: &str, status: RunStatus, task: &str) -> RunChoice {
    RunChoice {
        id: id.to_owned(),
        title: None,
        status,
        steps: 4,
        task: Some(task.to_owned()),
        task_id: None,
    }
}

/// A run list of three runs whose every entry opens the refund run under its own id.
fn picker() -> Headless {
    let runs = vec![
        choice("task-0", RunStatus::Failed, "Refund my annual plan"),
        choice("task-1", RunStatus::Succeeded, "Book a flight to Seattle"),
        choice("task-2", RunStatus::Failed, "Change my flight to Seattle"),
    ];
    let opts = AppOptions {
        size: (80, 24),
        ..AppOptions::default()
    };
    let app = App::picker(runs, opts);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = EffectContext {
        judged: None,
        outcome: None,
        comparer: None,
        theme: app.theme.clone(),
        port: port(),
        opener: Arc::new(|i| {
            let mut d = refund();
            let mut run = d.run.as_ref().clone();
            run.id = format!("task-{i}");
            d = Document::new(run, d.report.as_ref().clone(), None);
            Ok(d)
        }),
        events: tx,
        clipboard: Clipboard::None,
    };
    Headless::new(app, ctx, rx)
}

#[test]
fn the_run_list_filters_opens_and_comes_back() {
    let mut h = picker();
    let s = h.screen();
    assert!(
        s.contains("3 runs in this file, 2 failed or errored"),
        "{s}"
    );
    assert!(s.contains("Book a flight to Seattle"), "{s}");
    // Typing after / filters by the task's words; Enter keeps the filter, Enter again opens.
    press(&mut h, "/ s e a t t l e");
    assert_eq!(h.app.picker.as_ref().unwrap().shown, vec![1, 2]);
    assert!(h.screen().contains("2 of 3 runs"), "{}", h.screen());
    press(&mut h, "Enter j Enter");
    assert_eq!(h.app.doc.as_ref().unwrap().run.id, "task-2");
    assert!(h.app.shown_picker().is_none());
    // R shows the list again, the open run marked and selected; Esc goes back to it.
    press(&mut h, "R");
    let p = h.app.shown_picker().expect("the list is back");
    assert_eq!(p.opened, Some(2));
    assert_eq!(p.selected(), Some(2));
    assert!(h.screen().contains("▶»"), "{}", h.screen());
    press(&mut h, "Esc Esc");
    assert!(h.app.shown_picker().is_none());
    assert_eq!(h.app.doc.as_ref().unwrap().run.id, "task-2");
    // Choosing another run opens it.
    press(&mut h, "R g Enter");
    assert_eq!(h.app.doc.as_ref().unwrap().run.id, "task-0");
}

#[test]
fn a_file_of_one_run_has_no_list_to_go_back_to() {
    let mut h = headless(
        App::new(
            refund(),
            AppOptions {
                size: (80, 24),
                ..AppOptions::default()
            },
        ),
        port(),
    );
    press(&mut h, "R");
    assert!(h.app.shown_picker().is_none());
    assert!(
        h.app
            .status
            .as_ref()
            .is_some_and(|s| s.text.contains("this file holds one run"))
    );
}

#[test]
fn help_opens_over_the_run_list_and_takes_its_keys_until_closed() {
    let mut h = picker();
    press(&mut h, "?");
    let s = h.screen();
    assert!(s.contains("Help · Esc closes"), "{s}");
    // j and G scroll the help, not the list; the list's own keys close the help's pages.
    press(&mut h, "j G");
    assert_eq!(h.app.picker.as_ref().unwrap().cursor, 0);
    let s = h.screen();
    assert!(s.contains("Run list"), "{s}");
    press(&mut h, "Esc");
    assert!(h.app.overlay.is_none());
    assert!(h.app.shown_picker().is_some());
    press(&mut h, "j");
    assert_eq!(h.app.picker.as_ref().unwrap().cursor, 1);
}

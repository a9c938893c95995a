//! The experiments pane of the screen against a port that stands for the ledger: it shows each
//! unit's attribution as the ledger records it, offers to aggregate only the batches the port
//! marked ready, and sends a typed patch with a replay. Headless (no terminal), on the sample
//! refund run.

use std::path::Path;
use std::sync::{Arc, Mutex};
use tdn_tui::analysis::influence::HashedEmbedder;
use tdn_tui::analysis::load::{LoadOptions, load_path};
use tdn_tui::analysis::report::{AnalyzeOptions, analyze};
use tdn_tui::tui::app::{App, AppOptions, Document, Overlay};
use tdn_tui::tui::effects::{Clipboard, EffectContext};
use tdn_tui::tui::experiment_port::{
    EventSender, ExperimentPort, JobId, LedgerAttribution, LedgerCohort, LedgerHistory, Plan,
    Request,
};
use tdn_tui::tui::headless::{Headless, parse_keys};

/// What the pane asked of the port.
#[derive(Default)]
struct Calls {
    plans: Vec<Request>,
    launches: Vec<Request>,
    aggregated: Vec<Vec<String>>,
}

/// A port whose ledger holds one attribution and one open batch (`ready` as given).
struct LedgerPort {
    ready: bool,
    aggregated: Mutex<bool>,
    calls: Arc<Mutex<Calls>>,
}

impl ExperimentPort for LedgerPort {
    fn plan(&self, request: &Request) -> Result<Plan, String> {
        self.calls.lock().unwrap().plans.push(request.clone());
        Ok(Plan {
            command: "python3 agents/stand_in.py".to_owned(),
            origin: "the command line".to_owned(),
            lines: vec!["baseline: 3 samples".to_owned()],
            runner_calls: 6,
        })
    }

    fn launch(&self, _job: JobId, request: Request, _events: EventSender) -> Result<(), String> {
        self.calls.lock().unwrap().launches.push(request);
        Ok(())
    }

    fn cancel(&self, _job: JobId) {}

    fn earlier_trials(&self) -> Result<LedgerHistory, String> {
        let open = !*self.aggregated.lock().unwrap();
        Ok(LedgerHistory {
            path: Some("refund-outdated-policy.ledger.jsonl".to_owned()),
            attributions: vec![LedgerAttribution {
                kind: "document".to_owned(),
                unit: "policy-2019".to_owned(),
                disposition: "harmful".to_owned(),
                evidence_level: "causal_ablation".to_owned(),
                effect: -1.0,
                confidence: 0.75,
                trials: 3,
                tested_at: "2026-08-17T10:00:00Z".to_owned(),
                status: "verified".to_owned(),
                line: 13,
                earlier: 0,
            }],
            open_cohorts: if open {
                vec![LedgerCohort {
                    cohort: "b-20260817T090000Z-0000abcd".to_owned(),
                    trials: 2,
                    last_finished_at: "2026-08-17T09:00:00Z".to_owned(),
                    ready: self.ready,
                }]
            } else {
                Vec::new()
            },
            ..LedgerHistory::default()
        })
    }

    fn aggregate(&self, cohorts: &[String]) -> Result<String, String> {
        self.calls.lock().unwrap().aggregated.push(cohorts.to_vec());
        *self.aggregated.lock().unwrap() = true;
        Ok("aggregated 1 open batch(es)".to_owned())
    }
}

fn refund() -> Document {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-runs/refund-outdated-policy.json");
    let loaded = load_path(&path, &LoadOptions::default()).unwrap().remove(0);
    let report = analyze(&loaded, &AnalyzeOptions::new(&HashedEmbedder));
    Document::new(loaded.run, report, Some(path))
}

fn screen(ready: bool) -> (Headless, Arc<Mutex<Calls>>) {
    let calls = Arc::new(Mutex::new(Calls::default()));
    let port = Arc::new(LedgerPort {
        ready,
        aggregated: Mutex::new(false),
        calls: Arc::clone(&calls),
    });
    let app = App::new(
        refund(),
        AppOptions {
            size: (180, 48),
            ..AppOptions::default()
        },
    );
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = EffectContext {
        judged: None,
        theme: app.theme.clone(),
        port,
        opener: Arc::new(|_| Err("no other run".to_owned())),
        events: tx,
        clipboard: Clipboard::None,
    };
    (Headless::new(app, ctx, rx), calls)
}

fn press(h: &mut Headless, keys: &str) {
    h.press_all(&parse_keys(keys).unwrap());
}

#[test]
fn the_pane_shows_each_units_recorded_disposition_and_evidence_level() {
    let (mut h, _) = screen(true);
    press(&mut h, "6");
    let s = h.screen();
    assert!(
        s.contains("'policy-2019' ⊗ harmful · causal_ablation · effect -1 · confidence 0.75"),
        "{s}"
    );
    assert!(
        s.contains("batch b-20260817T090000Z-0000abcd 2 trial(s), left open"),
        "{s}"
    );
    // The selected attribution explains itself in the spec's words.
    press(&mut h, "g");
    let s = h.screen();
    assert!(
        s.contains("each re-run pair differed in exactly this unit"),
        "{s}"
    );
}

#[test]
fn only_batches_the_ledger_marked_ready_are_aggregated() {
    let (mut h, calls) = screen(false);
    press(&mut h, "6 c");
    assert!(calls.lock().unwrap().aggregated.is_empty());
    assert!(h.screen().contains("its session may still be running"));

    let (mut h, calls) = screen(true);
    press(&mut h, "6 c");
    assert_eq!(
        calls.lock().unwrap().aggregated,
        vec![vec!["b-20260817T090000Z-0000abcd".to_owned()]]
    );
    let s = h.screen();
    assert!(
        !s.contains("left open"),
        "the pane reloaded the ledger: {s}"
    );
}

#[test]
fn a_typed_patch_goes_with_the_replay_after_the_command_is_confirmed() {
    let (mut h, calls) = screen(true);
    // The timeline's last step is the model's answer (s4).
    press(&mut h, "1 G P");
    assert!(matches!(h.app.overlay, Some(Overlay::Prompt(_))));
    assert!(h.screen().contains("Replay from step 's4' with a patch"));
    press(&mut h, "Y o u Space g e t Space $ 8 0 . Backspace .");
    press(&mut h, "Enter");
    let expected = Request::Replay {
        from: "s4".into(),
        patch: Some("You get $80.".to_owned()),
    };
    assert_eq!(calls.lock().unwrap().plans, vec![expected.clone()]);
    assert!(h.screen().contains("Run your agent?"));
    press(&mut h, "y");
    assert_eq!(calls.lock().unwrap().launches, vec![expected]);
}

#[test]
fn an_empty_patch_is_refused_and_the_prompt_stays() {
    let (mut h, calls) = screen(true);
    press(&mut h, "1 G P Enter");
    assert!(matches!(h.app.overlay, Some(Overlay::Prompt(_))));
    assert!(calls.lock().unwrap().plans.is_empty());
    press(&mut h, "Esc");
    assert!(h.app.overlay.is_none());
}

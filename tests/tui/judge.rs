//! Asking the judge from the screen (docs/screen.md, "Asking the judge"): the first press shows
//! the command and sends nothing, the second sends it, any other key cancels, a run the rules
//! are sure about is never sent, and the judged report replaces the ranking while the
//! experiments stay. The judged report comes from a scripted opener, never computed here.

use super::fixture::{press, refund_scored, status};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tdn_tui::analysis::params::JUDGE_BELOW;
use tdn_tui::analysis::report::JudgeOutcome;
use tdn_tui::experiments::engine::Unavailable;
use tdn_tui::tui::app::{App, AppOptions, Document};
use tdn_tui::tui::effects::{Clipboard, EffectContext, Opener};
use tdn_tui::tui::headless::Headless;

/// A top score the rules are not sure of: the judge may be asked.
const UNSURE: f64 = JUDGE_BELOW - 0.1;

/// A screen on the refund run whose judge (when `command` is set) blames the second suspect's
/// step; `asked` counts the judge's runs.
fn screen(top: f64, command: Option<&str>, asked: Arc<AtomicUsize>) -> Headless {
    screen_moved(top, command, asked, None)
}

/// As [`screen`]; with `moved`, the judge named another step (`moved.0`) and the rules moved
/// its finding to the blamed one, saying why (`moved.1`).
fn screen_moved(
    top: f64,
    command: Option<&str>,
    asked: Arc<AtomicUsize>,
    moved: Option<(&'static str, &'static str)>,
) -> Headless {
    let mut app = App::new(refund_scored(top), AppOptions::default());
    app.judge.command = command.map(|c| format!("'{c}' (from TDN_JUDGE)"));
    let judged: Option<Arc<Opener>> = command.map(|_| {
        let judged: Arc<Opener> = Arc::new(move |i: usize| {
            assert_eq!(i, 0, "a file of one run");
            asked.fetch_add(1, Ordering::SeqCst);
            let d = refund_scored(top);
            let mut report = d.report.as_ref().clone();
            report.suspects.reverse();
            let blamed = report.suspects[0].step.clone();
            report.judge = Some(JudgeOutcome {
                step: Some(blamed),
                reason: Some("it wrote the refund".to_owned()),
                error: None,
                named: moved.map(|m| m.0.to_owned()),
                moved_because: moved.map(|m| m.1.to_owned()),
            });
            Ok(Document::new(d.run.as_ref().clone(), report, None))
        });
        judged
    });
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = EffectContext {
        theme: app.theme.clone(),
        port: Arc::new(Unavailable {
            reason: "no runner in this test".to_owned(),
        }),
        opener: Arc::new(|_| Err("no other run".to_owned())),
        judged,
        outcome: None,
        comparer: None,
        events: tx,
        clipboard: Clipboard::None,
    };
    Headless::new(app, ctx, rx)
}

fn top_step(h: &Headless) -> String {
    h.app.doc.as_ref().unwrap().report.suspects[0].step.clone()
}

#[test]
fn the_first_press_shows_the_command_and_the_second_asks_the_judge() {
    let asked = Arc::new(AtomicUsize::new(0));
    let mut h = screen(UNSURE, Some("./judge.sh"), asked.clone());
    let before = top_step(&h);
    press(&mut h, "J");
    assert_eq!(
        asked.load(Ordering::SeqCst),
        0,
        "nothing is sent on the first press"
    );
    let s = status(&h);
    assert!(
        s.contains("'./judge.sh' (from TDN_JUDGE)") && s.contains("press J again"),
        "{s}"
    );
    press(&mut h, "J");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    let doc = h.app.doc.as_ref().unwrap();
    assert!(doc.report.judge.is_some());
    assert_ne!(top_step(&h), before, "the judged ranking is shown");
    assert!(
        status(&h).contains("the judge blames step"),
        "{}",
        status(&h)
    );
    assert!(!h.app.judge.asking);
    // It has answered: another press sends nothing.
    press(&mut h, "J");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[test]
fn another_key_between_the_presses_cancels() {
    let asked = Arc::new(AtomicUsize::new(0));
    let mut h = screen(UNSURE, Some("./judge.sh"), asked.clone());
    press(&mut h, "J j J");
    assert_eq!(
        asked.load(Ordering::SeqCst),
        0,
        "j cancelled the first press"
    );
    assert!(h.app.judge.armed, "the last J is a new first press");
    press(&mut h, "J");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[test]
fn a_run_the_rules_are_sure_about_or_no_judge_sends_nothing() {
    let asked = Arc::new(AtomicUsize::new(0));
    let mut sure = screen(0.84, Some("./judge.sh"), asked.clone());
    press(&mut sure, "J J");
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    assert!(
        status(&sure).contains(&format!("no suspect scored above {JUDGE_BELOW}")),
        "{}",
        status(&sure)
    );

    let mut none = screen(UNSURE, None, asked.clone());
    press(&mut none, "J J");
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    assert!(
        status(&none).contains("no judge is configured"),
        "{}",
        status(&none)
    );
}

#[test]
fn a_judge_answer_moved_by_the_rules_says_both_steps_and_why() {
    let asked = Arc::new(AtomicUsize::new(0));
    let why =
        "the plan proposed at step 's2' (position 2) was carried out at step 's4' (position 4)";
    let mut h = screen_moved(UNSURE, Some("./judge.sh"), asked, Some(("s2", why)));
    press(&mut h, "J J");
    let blamed = h
        .app
        .doc
        .as_ref()
        .unwrap()
        .report
        .judge
        .as_ref()
        .unwrap()
        .step
        .clone();
    let s = status(&h);
    assert!(s.contains("the judge named step 's2'"), "{s}");
    assert!(s.contains(&format!("to step '{}'", blamed.unwrap())), "{s}");
    assert!(s.contains(why), "{s}");
}

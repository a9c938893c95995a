//! State tests: keys go through the keymap, `update` and the effects, and the assertions read
//! the `App`. Expected values come from the hand-written fixtures (tests/fixtures/tui/).

use super::big_run::big;
use super::fixture::{calendar, press, screen, scripted};
use std::sync::Arc;
use tdn_tui::analysis::model::{Run, RunStatus, Step, StepKind};
use tdn_tui::analysis::report::{Report, Verdict};
use tdn_tui::experiments::engine::{Request, ScriptedPort, Target, Unavailable};
use tdn_tui::experiments::event::{JobEnd, JobId};
use tdn_tui::tui::app::{App, AppOptions, Document, Overlay, Pane};
use tdn_tui::tui::headless::Headless;
use tdn_tui::tui::keymap::Keymap;
use tdn_tui::tui::overlays::confirm::ConfirmState;
use tdn_tui::tui::panes::experiments::JobState;
use tdn_tui::tui::panes::suspects::View;
use tdn_tui::tui::picker::RunChoice;

fn selected_id(h: &Headless) -> String {
    let doc = h.app.doc.as_ref().expect("a run is open");
    let i = h.app.selected_step().expect("a step is selected");
    doc.run.steps[i].id.to_string()
}

fn none() -> Arc<Unavailable> {
    Arc::new(Unavailable {
        reason: "no runner in this test".to_owned(),
    })
}

#[test]
fn a_run_opens_on_its_top_suspect() {
    let h = screen(calendar(), (120, 40), none());
    assert_eq!(h.app.focus, Pane::Suspects);
    assert_eq!(h.app.suspects.cursor, 0);
    assert_eq!(
        selected_id(&h),
        "s3",
        "the report's rank-1 suspect is step s3"
    );
}

#[test]
fn suspect_keys_step_through_the_ranking_and_move_the_timeline() {
    let mut h = screen(calendar(), (120, 40), none());
    press(&mut h, "]");
    assert_eq!(selected_id(&h), "s4");
    press(&mut h, "]");
    assert_eq!(selected_id(&h), "s9");
    press(&mut h, "]");
    assert_eq!(
        selected_id(&h),
        "s9",
        "three suspects: the last stays selected"
    );
    assert!(
        h.app
            .status
            .as_ref()
            .is_some_and(|s| s.text.contains("last suspect"))
    );
    press(&mut h, "[ [");
    assert_eq!(selected_id(&h), "s3");
    // Moving in the pane does the same, and stops at the last suspect.
    press(&mut h, "j");
    assert_eq!(selected_id(&h), "s4");
    press(&mut h, "j j");
    assert_eq!(h.app.suspects.cursor, 2);
    // The influence ranking is the pane's other list, one key away, with its own cursor.
    press(&mut h, "i");
    assert_eq!(h.app.suspects.view, View::Context);
    assert_eq!(h.app.suspects.cursor(), 0);
    assert!(h.screen().contains("▶1  ★ u-cal-doc"), "{}", h.screen());
    press(&mut h, "j i");
    assert_eq!(h.app.suspects.view, View::Steps);
    assert_eq!(h.app.suspects.cursor(), 2, "each list keeps its place");
    press(&mut h, "i [");
    assert_eq!(h.app.suspects.view, View::Steps, "[ goes back to the steps");
    assert_eq!(selected_id(&h), "s4");
}

#[test]
fn the_influence_key_from_another_pane_shows_the_ranking() {
    let mut h = screen(calendar(), (80, 24), none());
    press(&mut h, "1 i");
    assert_eq!(h.app.focus, Pane::Suspects);
    assert_eq!(h.app.suspects.view, View::Context);
    let s = h.screen();
    assert!(s.contains("[Context influence (4)]"), "{s}");
    assert!(s.contains("correlation, not a cause"), "{s}");
    // Every entry of the ranking can be selected at 80x24.
    press(&mut h, "G");
    assert!(h.screen().contains("▶4"), "{}", h.screen());
}

#[test]
fn tab_visits_every_pane_and_numbers_jump() {
    let mut h = screen(calendar(), (120, 40), none());
    let mut seen = vec![h.app.focus];
    for _ in 0..5 {
        press(&mut h, "Tab");
        seen.push(h.app.focus);
    }
    for p in Pane::ALL {
        assert!(seen.contains(&p), "{p:?} not reached by Tab");
    }
    press(&mut h, "Tab");
    assert_eq!(h.app.focus, Pane::Suspects, "Tab wraps around");
    press(&mut h, "S-Tab");
    assert_eq!(h.app.focus, Pane::Timeline);
    press(&mut h, "5");
    assert_eq!((h.app.focus, h.app.secondary), (Pane::Claims, Pane::Claims));
}

#[test]
fn nested_steps_fold_and_unfold() {
    let mut h = screen(calendar(), (120, 40), none());
    press(&mut h, "1 g j");
    assert_eq!(selected_id(&h), "s2");
    press(&mut h, "Space");
    // s3..s7 name s2 as parent; s1, s2, s8, s9 stay.
    assert_eq!(h.app.timeline.visible, vec![0, 1, 7, 8]);
    assert_eq!(selected_id(&h), "s2");
    press(&mut h, "Space");
    assert_eq!(h.app.timeline.visible.len(), 9);
    press(&mut h, "j j h");
    assert_eq!(
        selected_id(&h),
        "s2",
        "collapse on a leaf goes to its parent"
    );
    press(&mut h, "h");
    assert_eq!(h.app.timeline.visible.len(), 4);
    // Jumping to a hidden step unfolds it.
    press(&mut h, "]");
    assert_eq!(selected_id(&h), "s4");
    assert_eq!(h.app.timeline.visible.len(), 9);
}

#[test]
fn fuzzy_search_selects_matches_and_escape_goes_back() {
    let mut h = screen(calendar(), (120, 40), none());
    press(&mut h, "1 g / c r e v t");
    assert!(h.app.search.active);
    // "crevt" fuzzy-matches the labels naming create_event: s4 and s7 (not search_calendar's
    // "...calendar @planner retrieval", which has no t after its v).
    assert_eq!(h.app.search.hits.steps, vec![3, 6]);
    assert_eq!(selected_id(&h), "s4");
    press(&mut h, "Enter n");
    assert!(!h.app.search.active);
    assert_eq!(selected_id(&h), "s7");
    press(&mut h, "n");
    assert_eq!(selected_id(&h), "s4", "n wraps around");
    press(&mut h, "N");
    assert_eq!(selected_id(&h), "s7");
    press(&mut h, "/ z z z");
    assert!(h.app.search.hits.steps.is_empty());
    press(&mut h, "Esc");
    assert!(!h.app.search.active);
    assert_eq!(
        selected_id(&h),
        "s7",
        "Esc returns to where the search started"
    );
}

#[test]
fn claim_keys_jump_to_evidence_and_origin() {
    let mut h = screen(calendar(), (120, 40), none());
    press(&mut h, "5 e");
    assert_eq!(selected_id(&h), "s7");
    press(&mut h, "5 o");
    assert_eq!(selected_id(&h), "s9");
    press(&mut h, "5 j o");
    assert_eq!(selected_id(&h), "s6", "the second claim originates at s6");
    press(&mut h, "5 j e");
    assert!(
        h.app
            .status
            .as_ref()
            .is_some_and(|s| s.text.contains("no evidence step"))
    );
}

#[test]
fn the_first_experiment_shows_the_command_and_runs_only_after_yes() {
    let port = scripted();
    let mut h = screen(calendar(), (120, 40), port.clone());
    press(&mut h, "i a");
    let Some(Overlay::Confirm(ConfirmState::Run(c))) = &h.app.overlay else {
        panic!("no confirm overlay: {:?}", h.app.overlay);
    };
    assert_eq!(c.runner.text, "./stand-in-agent.sh");
    assert_eq!(
        c.request,
        Request::Ablate(vec![Target::Unit("u-cal-doc".into())])
    );
    assert!(
        h.app.experiments.jobs.is_empty(),
        "nothing runs before the user says yes"
    );
    assert!(
        h.screen().contains("./stand-in-agent.sh"),
        "the exact command is on the screen"
    );
    press(&mut h, "y");
    assert!(h.app.overlay.is_none());
    let job = &h.app.experiments.jobs[0];
    assert!(matches!(job.state, JobState::Ended(JobEnd::Finished)));
    let r = &h.app.experiments.results[&Target::Unit("u-cal-doc".into())];
    assert_eq!(r.verdict, Some(Verdict::Confirmed));
    assert!(h.screen().contains("CAUSAL"), "the verdict is shown");
    // The second experiment of the session runs without asking again.
    press(&mut h, "2 j a");
    assert!(h.app.overlay.is_none());
    assert_eq!(h.app.experiments.jobs.len(), 2);
    assert_eq!(
        h.app.experiments.results[&Target::Unit("u-prefs".into())].verdict,
        Some(Verdict::NotConfirmed)
    );
    // A step that produced no unit is refused, with the key that tests it instead.
    press(&mut h, "2 i a");
    assert_eq!(h.app.experiments.jobs.len(), 2);
    assert!(
        h.app
            .status
            .as_ref()
            .is_some_and(|s| s.problem && s.text.contains("can only be replayed")),
        "{:?}",
        h.app.status
    );
}

#[test]
fn saying_no_runs_nothing() {
    let mut h = screen(calendar(), (120, 40), scripted());
    press(&mut h, "i a n");
    assert!(h.app.overlay.is_none());
    assert!(h.app.experiments.jobs.is_empty());
    assert!(!h.app.experiments.consented);
}

#[test]
fn experiments_are_refused_without_a_runner_or_a_final_answer() {
    let mut h = screen(calendar(), (120, 40), none());
    press(&mut h, "a");
    assert!(h.app.overlay.is_none());
    assert!(
        h.app
            .status
            .as_ref()
            .is_some_and(|s| s.problem && s.text.contains("no runner"))
    );
    let mut doc_run = calendar().run.as_ref().clone();
    doc_run.final_answer = None;
    let report = calendar().report.as_ref().clone();
    let mut h = screen(Document::new(doc_run, report, None), (120, 40), scripted());
    press(&mut h, "a");
    assert!(h.app.overlay.is_none());
    assert!(
        h.app
            .status
            .as_ref()
            .is_some_and(|s| s.text.contains("no final answer"))
    );
}

#[test]
fn a_dropped_unit_can_be_restored_and_a_context_unit_ablated() {
    let mut h = screen(calendar(), (120, 40), scripted());
    // From another pane, the restore key shows the dropped units first and runs nothing.
    press(&mut h, "r");
    assert_eq!(h.app.focus, Pane::Dropped);
    assert!(h.app.overlay.is_none());
    assert!(
        h.app
            .status
            .as_ref()
            .is_some_and(|s| s.text.contains("select the unit to put back")),
        "{:?}",
        h.app.status
    );
    // The first dropped unit is selected when the pane opens.
    press(&mut h, "r");
    let Some(Overlay::Confirm(ConfirmState::Run(c))) = &h.app.overlay else {
        panic!("no confirm")
    };
    assert_eq!(c.request, Request::Restore(vec!["u-tz".into()]));
    press(&mut h, "n k r");
    assert!(
        h.app.overlay.is_none(),
        "a step row names no unit to restore"
    );
    assert!(
        h.app
            .status
            .as_ref()
            .is_some_and(|s| s.text.contains("select one of the dropped units"))
    );
    press(&mut h, "2 i a");
    let Some(Overlay::Confirm(ConfirmState::Run(c))) = &h.app.overlay else {
        panic!("no confirm")
    };
    assert_eq!(
        c.request,
        Request::Ablate(vec![Target::Unit("u-cal-doc".into())])
    );
    press(&mut h, "n A");
    let Some(Overlay::Confirm(ConfirmState::Run(c))) = &h.app.overlay else {
        panic!("no confirm")
    };
    assert_eq!(
        c.request,
        Request::AblateEach(vec![
            Target::Unit("u-cal-doc".into()),
            Target::Unit("u-prefs".into())
        ]),
        "the influence shortlist, one unit at a time"
    );
}

#[test]
fn a_running_job_can_be_cancelled() {
    let mut p = ScriptedPort::new("./agent.sh");
    p.hold = true;
    let port = Arc::new(p);
    let mut h = screen(calendar(), (120, 40), port.clone());
    press(&mut h, "i a y");
    assert!(matches!(h.app.experiments.jobs[0].state, JobState::Running));
    // The Experiments pane took the Suspects slot: the focus went with it, so `x` acts there.
    assert_eq!(h.app.focus, Pane::Experiments);
    press(&mut h, "x");
    assert_eq!(port.cancelled_jobs(), vec![JobId(1)]);
}

#[test]
fn a_user_keymap_changes_dispatch_and_help_alike() {
    let mut km = Keymap::defaults();
    assert!(
        km.merge_toml("[global]\nnext-suspect = \"J\"\n", "keymap.toml")
            .is_empty()
    );
    let opts = AppOptions {
        keymap: km,
        size: (120, 40),
        ..AppOptions::default()
    };
    let mut h = super::fixture::headless(App::new(calendar(), opts), none());
    press(&mut h, "]");
    assert_eq!(selected_id(&h), "s3", "] is no longer bound");
    press(&mut h, "J");
    assert_eq!(selected_id(&h), "s4");
    press(&mut h, "?");
    let screen = h.screen();
    assert!(
        screen.contains("J and [ step through the suspects"),
        "{screen}"
    );
}

#[test]
fn empty_one_step_and_huge_runs_open() {
    let empty = Document::new(
        Run::new("empty", RunStatus::Failed),
        report_for("empty", 0),
        None,
    );
    let mut h = screen(empty, (80, 24), none());
    press(&mut h, "j k G g Space ] a / x Enter 3 y 4 r 6 x ? Esc");
    assert!(h.app.selected_step().is_none());
    assert!(h.screen().contains("· 0 steps"));

    let mut one = Run::new("one", RunStatus::Succeeded);
    one.steps.push(Step::new("only", StepKind::User));
    one.reindex();
    let mut h = screen(
        Document::new(one, report_for("one", 1), None),
        (80, 24),
        none(),
    );
    press(&mut h, "1 j G Space Enter Esc");
    assert_eq!(selected_id(&h), "only");

    let mut h = screen(big(100_000), (120, 40), none());
    press(&mut h, "1 G");
    assert_eq!(selected_id(&h), "s99999");
    press(&mut h, "h");
    assert_eq!(
        selected_id(&h),
        "s99990",
        "a leaf's collapse goes to its parent"
    );
    press(&mut h, "Space");
    assert_eq!(h.app.timeline.visible.len(), 99_991);
    assert!(h.screen().contains("99991"));
}

fn report_for(id: &str, steps: usize) -> Report {
    let mut r = calendar().report.as_ref().clone();
    r.run.id = id.to_owned();
    r.run.steps = steps;
    r.suspects.clear();
    r.verdict = None;
    r.links.clear();
    r.claims.clear();
    r.influence = None;
    r.dropped = None;
    r
}

#[test]
fn the_picker_opens_the_chosen_run() {
    let choices = vec![
        RunChoice {
            id: "a".into(),
            title: None,
            status: RunStatus::Failed,
            steps: 9,
            task: None,
            task_id: None,
        },
        RunChoice {
            id: "b".into(),
            title: Some("second".into()),
            status: RunStatus::Succeeded,
            steps: 9,
            task: Some("book a call".into()),
            task_id: None,
        },
    ];
    let app = App::picker(choices, AppOptions::default());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = tdn_tui::tui::effects::EffectContext {
        judged: None,
        outcome: None,
        comparer: None,
        theme: app.theme.clone(),
        port: none(),
        opener: Arc::new(|i| {
            if i == 1 {
                Ok(calendar())
            } else {
                Err(format!("no run {i}"))
            }
        }),
        events: tx,
        clipboard: tdn_tui::tui::effects::Clipboard::None,
    };
    let mut h = Headless::new(app, ctx, rx);
    let list = h.screen();
    assert!(
        list.contains("2 runs in this file, 1 failed or errored"),
        "{list}"
    );
    assert!(
        list.contains("book a call"),
        "the task is shown under its run: {list}"
    );
    press(&mut h, "j Enter");
    assert!(h.app.doc.is_some());
    assert_eq!(selected_id(&h), "s3");
}

#[test]
fn copying_without_a_terminal_says_nothing_was_copied() {
    let mut h = screen(calendar(), (120, 40), none());
    press(&mut h, "y");
    let s = h.app.status.as_ref().expect("a message");
    assert!(
        s.problem && s.text.contains("nothing was copied"),
        "{}",
        s.text
    );
}

#[test]
fn resizing_below_the_minimum_shows_the_notice_and_back_restores() {
    let mut h = screen(calendar(), (120, 40), none());
    h.act(tdn_tui::tui::action::Action::Resize(50, 10));
    h.app.size = (50, 10);
    assert!(h.screen().contains("Terminal too small"));
    h.act(tdn_tui::tui::action::Action::Resize(80, 24));
    assert!(h.screen().contains("Suspects"));
}

#[test]
fn while_the_terminal_is_too_small_only_quitting_works() {
    // The confirm box is open when the terminal shrinks: y must not run the command unseen.
    let mut h = screen(calendar(), (120, 40), scripted());
    press(&mut h, "i a");
    assert!(matches!(h.app.overlay, Some(Overlay::Confirm(_))));
    h.act(tdn_tui::tui::action::Action::Resize(50, 12));
    press(&mut h, "y Enter 1 Tab");
    assert!(h.app.experiments.jobs.is_empty(), "nothing ran");
    assert!(matches!(h.app.overlay, Some(Overlay::Confirm(_))));
    assert_eq!(h.app.focus, Pane::Suspects);
    // The notice says q quits, and it does, whatever was open.
    assert!(h.screen().contains("press q to quit"), "{}", h.screen());
    press(&mut h, "q");
    assert!(h.app.quit);

    // A search being typed does not take the q either.
    let mut h = screen(calendar(), (120, 40), none());
    press(&mut h, "/");
    h.act(tdn_tui::tui::action::Action::Resize(50, 12));
    press(&mut h, "q");
    assert!(h.app.quit, "q quits instead of being typed");
    assert!(h.app.search.input.is_empty());
}

#[test]
fn the_viewer_shows_the_selected_step_full_screen() {
    let mut h = screen(calendar(), (120, 40), none());
    press(&mut h, "1 j Enter");
    assert!(matches!(h.app.overlay, Some(Overlay::Viewer { .. })));
    let s = h.screen();
    assert!(
        s.contains("invalid start: 'Friday' is not a date-time"),
        "{s}"
    );
    press(&mut h, "Esc");
    assert!(h.app.overlay.is_none());
}

/// The step detail lists the selected step's links in report order, found by step (issue 11:
/// a search of every link of a 100,000-step run on each key was the slow keypress).
#[test]
fn the_detail_lists_a_steps_links_in_report_order() {
    use super::big_run::{big_report, big_run};
    use tdn_tui::analysis::report::Link;
    let run = big_run(20);
    let mut report = big_report(&run);
    let link = |f: usize, t: usize, v: &str| Link {
        from: format!("s{f}"),
        to: format!("s{t}"),
        value: v.to_owned(),
    };
    report.links = vec![
        link(1, 6, "first-in"),
        link(6, 9, "first-out"),
        link(0, 6, "second-in"),
        link(6, 7, "second-out"),
        link(2, 3, "elsewhere"),
    ];
    let doc = Document::new(run, report, None);
    assert_eq!(doc.links_of.into_step(6), &[0, 2]);
    assert_eq!(doc.links_of.out_of_step(6), &[1, 3]);
    assert!(doc.links_of.into_step(99).is_empty());
    let mut h = screen(doc, (120, 60), none());
    press(&mut h, "1 g j j j j j j");
    assert_eq!(selected_id(&h), "s6");
    let s = h.screen();
    let at = |needle: &str| {
        s.find(needle)
            .unwrap_or_else(|| panic!("{needle} in:\n{s}"))
    };
    assert!(at("'first-in'") < at("'second-in'"));
    assert!(at("'second-in'") < at("'first-out'"));
    assert!(at("'first-out'") < at("'second-out'"));
    assert!(!s.contains("'elsewhere'"), "{s}");
}

#[test]
fn leads_follow_the_suspects_under_their_own_line_and_the_keys_reach_them() {
    let doc = calendar();
    let mut report = doc.report.as_ref().clone();
    let mut lead = report.suspects[0].clone();
    lead.rank = 1;
    lead.step = "s1".to_owned();
    lead.index = 0;
    lead.category = "point_of_no_return".to_owned();
    lead.title = "the first state-changing call".to_owned();
    report.leads = vec![lead];
    let doc = Document::new(doc.run.as_ref().clone(), report, None);
    let mut h = screen(doc, (120, 40), none());
    press(&mut h, "] ] ]");
    assert_eq!(selected_id(&h), "s1", "after the three suspects, the lead");
    let s = h.screen();
    assert!(s.contains("Leads: listed for where they sit"), "{s}");
    assert!(s.contains("L1"), "{s}");
    assert!(s.contains("3, 1 lead"), "{s}");
    assert!(s.contains("a lead: listed for where it"), "{s}");
}

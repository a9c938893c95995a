//! Leaving a run for another of the same file while work on it is under way (docs/screen.md,
//! "The run list"): an answer of the judge about the run left behind changes neither the open
//! run nor the report its experiments are planned from, and the jobs started on it stay listed
//! with it (cancellable when it is open again) while their ends are said to be that run's. Runs and reports come from the screen's
//! fixtures; verdicts from a scripted port, never computed here.

use super::fixture::{press, refund_scored, status};
use std::sync::{Arc, Mutex};
use tdn_tui::analysis::model::{Run, RunStatus};
use tdn_tui::analysis::report::{JudgeOutcome, Report};
use tdn_tui::experiments::engine::{
    EngineError, ExperimentPort, Plan, Request, RunEvidence, ScriptedPort,
};
use tdn_tui::experiments::event::{Event, EventKind, EventSender, JobEnd, JobId, JobOutcome};
use tdn_tui::tui::action::Action;
use tdn_tui::tui::app::{App, AppOptions, Document};
use tdn_tui::tui::effects::{Clipboard, EffectContext, Opener};
use tdn_tui::tui::headless::Headless;
use tdn_tui::tui::panes::experiments::JobState;
use tdn_tui::tui::picker::RunChoice;

/// The refund fixture under the id `task-{i}`, its rule scores low enough to ask the judge.
fn refund(i: usize) -> Document {
    let d = refund_scored(tdn_tui::analysis::params::JUDGE_BELOW - 0.1);
    let mut run = d.run.as_ref().clone();
    let mut report = d.report.as_ref().clone();
    run.id = format!("task-{i}");
    report.run.id = run.id.clone();
    Document::new(run, report, d.source.clone())
}

/// A scripted port that remembers which runs experiments were pointed at, in order.
struct Recording {
    inner: ScriptedPort,
    opened: Mutex<Vec<String>>,
}

impl ExperimentPort for Recording {
    fn plan(&self, request: Request) -> Result<Plan, EngineError> {
        self.inner.plan(request)
    }
    fn launch(&self, job: JobId, plan: Plan, events: EventSender) -> Result<(), EngineError> {
        self.inner.launch(job, plan, events)
    }
    fn cancel(&self, job: JobId, why: &str) {
        self.inner.cancel(job, why)
    }
    fn evidence(&self) -> Result<RunEvidence, EngineError> {
        self.inner.evidence()
    }
    fn open(&self, run: Arc<Run>, report: Arc<Report>, source: Option<std::path::PathBuf>) {
        self.inner.open(run.clone(), report.clone(), source);
        let judged = if report.judge.is_some() {
            " (judged)"
        } else {
            ""
        };
        self.opened
            .lock()
            .unwrap()
            .push(format!("{}{judged}", run.id));
    }
}

/// A list of two failed runs; the judge blames the last suspect of whichever run it is asked
/// about.
fn two_runs(port: Arc<Recording>) -> Headless {
    let choice = |i: usize| RunChoice {
        id: format!("task-{i}"),
        title: None,
        status: RunStatus::Failed,
        steps: 4,
        task: Some("Refund my annual plan".to_owned()),
        task_id: None,
    };
    let opts = AppOptions {
        size: (120, 40),
        ..AppOptions::default()
    };
    let mut app = App::picker(vec![choice(0), choice(1)], opts);
    app.judge.command = Some("'./judge.sh' (from TDN_JUDGE)".to_owned());
    let judged: Arc<Opener> = Arc::new(|i| {
        let d = refund(i);
        let mut report = d.report.as_ref().clone();
        report.suspects.reverse();
        report.judge = Some(JudgeOutcome {
            step: Some(report.suspects[0].step.clone()),
            reason: Some("scripted".to_owned()),
            error: None,
            named: None,
            moved_because: None,
        });
        Ok(Document::new(
            d.run.as_ref().clone(),
            report,
            d.source.clone(),
        ))
    });
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = EffectContext {
        theme: app.theme.clone(),
        port,
        opener: Arc::new(|i| Ok(refund(i))),
        judged: Some(judged),
        outcome: None,
        comparer: None,
        events: tx,
        clipboard: Clipboard::None,
    };
    Headless::new(app, ctx, rx)
}

fn recording() -> Arc<Recording> {
    Arc::new(Recording {
        inner: ScriptedPort::new("./agent.sh"),
        opened: Mutex::new(Vec::new()),
    })
}

#[test]
fn the_judges_answer_about_a_run_left_behind_is_set_aside() {
    let port = recording();
    let mut h = two_runs(port.clone());
    press(&mut h, "Enter");
    assert_eq!(h.app.doc.as_ref().unwrap().run.id, "task-0");
    // The judge is asked about task-0; before it answers, the user opens task-1.
    press(&mut h, "J");
    let fx = tdn_tui::tui::update::update(&mut h.app, Action::AskJudge);
    assert_eq!(
        format!("{fx:?}"),
        "[Judge(0)]",
        "the question is about run 0"
    );
    press(&mut h, "R j Enter");
    assert_eq!(h.app.doc.as_ref().unwrap().run.id, "task-1");
    let top = h.app.doc.as_ref().unwrap().report.suspects[0].step.clone();
    let late = {
        let d = refund(0);
        let mut report = d.report.as_ref().clone();
        report.judge = Some(JudgeOutcome {
            step: None,
            reason: None,
            error: Some("late".to_owned()),
            named: None,
            moved_because: None,
        });
        Arc::new(Document::new(d.run.as_ref().clone(), report, None))
    };
    h.act(Action::Judged(0, late));
    let doc = h.app.doc.as_ref().unwrap();
    assert_eq!(doc.run.id, "task-1", "the open run stays on screen");
    assert!(doc.report.judge.is_none());
    assert_eq!(doc.report.suspects[0].step, top);
    assert!(!h.app.judge.asking);
    assert!(
        status(&h).contains("run 0 of the file, which is no longer open"),
        "{}",
        status(&h)
    );
    assert_eq!(
        *port.opened.lock().unwrap(),
        ["task-0", "task-1"],
        "experiments stay pointed at the open run"
    );
    // Asked about the open run, the answer replaces its report, for experiments too.
    press(&mut h, "J");
    let doc = h.app.doc.as_ref().unwrap();
    assert_eq!(doc.run.id, "task-1");
    assert!(doc.report.judge.is_some());
    assert_eq!(
        port.opened.lock().unwrap().last().map(String::as_str),
        Some("task-1 (judged)")
    );
}

#[test]
fn a_job_of_a_run_left_behind_stays_with_that_run() {
    let mut scripted = ScriptedPort::new("./agent.sh");
    scripted.hold = true;
    let port = Arc::new(Recording {
        inner: scripted,
        opened: Mutex::new(Vec::new()),
    });
    let mut h = two_runs(port.clone());
    press(&mut h, "Enter a y");
    assert_eq!(h.app.experiments.jobs.len(), 1, "job #1 runs on task-0");
    press(&mut h, "R j Enter");
    assert_eq!(h.app.doc.as_ref().unwrap().run.id, "task-1");
    assert!(h.app.experiments.jobs.is_empty(), "task-1 has no job");
    h.act(Action::Experiment(Arc::new(Event {
        job: JobId(1),
        kind: EventKind::Done(Arc::new(JobOutcome {
            end: JobEnd::Finished,
            session: None,
            closed: None,
            ledger: None,
            spent: None,
        })),
    })));
    let s = status(&h);
    assert!(
        s.contains("job #1 of run 'task-0' finished") && !s.contains("in Experiments"),
        "the message names the run the job belongs to: {s}"
    );
    assert!(h.app.experiments.jobs.is_empty());
    // Back on task-0, its job is listed with its end, and job numbers go on.
    press(&mut h, "R k Enter");
    assert_eq!(h.app.doc.as_ref().unwrap().run.id, "task-0");
    let job = h
        .app
        .experiments
        .jobs
        .first()
        .expect("task-0's job is back");
    assert_eq!(job.id, JobId(1));
    assert!(matches!(job.state, JobState::Ended(JobEnd::Finished)));
    press(&mut h, "a");
    assert_eq!(h.app.experiments.jobs.last().map(|j| j.id), Some(JobId(2)));
}

#[test]
fn a_job_still_running_on_a_run_left_behind_can_be_cancelled_on_return() {
    let mut scripted = ScriptedPort::new("./agent.sh");
    scripted.hold = true;
    let port = Arc::new(Recording {
        inner: scripted,
        opened: Mutex::new(Vec::new()),
    });
    let mut h = two_runs(port.clone());
    press(&mut h, "Enter a y R j Enter R k Enter 6 x");
    assert_eq!(port.inner.cancelled_jobs(), [JobId(1)]);
}

#[test]
fn with_the_mouse_on_the_wheel_moves_the_run_list_not_the_panes_under_it() {
    let mut h = two_runs(recording());
    press(&mut h, "Enter 1 M R");
    assert!(h.app.mouse);
    let timeline = h.app.timeline.cursor;
    // Over the list's second entry, in the middle of the screen.
    h.act(Action::Scroll(1, 40, 6));
    assert_eq!(h.app.picker.as_ref().unwrap().cursor, 1, "the list moved");
    h.act(Action::Click(100, 30));
    h.act(Action::Scroll(1, 100, 30));
    assert_eq!(
        h.app.timeline.cursor, timeline,
        "the hidden timeline did not"
    );
    assert_eq!(h.app.focus, tdn_tui::tui::app::Pane::Timeline);
    h.act(Action::Scroll(-1, 40, 6));
    assert_eq!(h.app.picker.as_ref().unwrap().cursor, 0);
}

#[test]
fn a_plan_that_arrives_after_the_run_was_left_starts_nothing() {
    let port = recording();
    let mut h = two_runs(port);
    press(&mut h, "Enter");
    // `a` asks for a plan; the user opens the other run before it arrives.
    let fx = tdn_tui::tui::update::update(&mut h.app, Action::Ablate);
    assert!(format!("{fx:?}").starts_with("[Plan("), "{fx:?}");
    let request = Request::Localize;
    press(&mut h, "R j Enter");
    assert_eq!(h.app.doc.as_ref().unwrap().run.id, "task-1");
    let other = ScriptedPort::new("./agent.sh");
    let d = refund(0);
    other.open(d.run.clone(), d.report.clone(), d.source.clone());
    h.act(Action::Planned(Arc::new((
        request,
        Ok(other.plan(Request::Localize).unwrap()),
    ))));
    assert!(h.app.overlay.is_none(), "no confirm box for the run left");
    assert!(h.app.experiments.jobs.is_empty());
}

#[test]
fn a_confirm_box_is_closed_when_another_run_opens() {
    let port = recording();
    let mut h = two_runs(port);
    press(&mut h, "Enter a");
    assert!(matches!(
        h.app.overlay,
        Some(tdn_tui::tui::app::Overlay::Confirm(_))
    ));
    // The box is for task-0; opening task-1 from the list (reached while the box is up only
    // through a late event) must not leave it standing.
    let d = refund(1);
    h.act(Action::Opened(Arc::new(d)));
    assert!(h.app.overlay.is_none());
}

#[test]
fn only_a_failed_open_ends_the_list_s_opening_state() {
    let port = recording();
    let mut h = two_runs(port);
    h.app.picker.as_mut().unwrap().opening = Some(1);
    h.act(Action::Problem("nothing was aggregated: busy".to_owned()));
    assert_eq!(h.app.picker.as_ref().unwrap().opening, Some(1));
    h.act(Action::OpenFailed(
        "the file has no run at position 1".to_owned(),
    ));
    assert_eq!(h.app.picker.as_ref().unwrap().opening, None);
    assert!(
        status(&h).contains("no run at position 1"),
        "{}",
        status(&h)
    );
}

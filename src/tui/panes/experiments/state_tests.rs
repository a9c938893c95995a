//! Tests of the experiments pane's state: how samples are counted, and when the pane says no
//! re-run can work from here.

use super::state::{ExperimentsState, Job, JobState, ProbeRun, RunnerReach, SampleState};
use crate::analysis::model::StepId;
use crate::experiments::engine::{Request, Target};
use crate::experiments::event::{JobEnd, JobId, ProbeInfo, SampleEnd, Saved};
use crate::experiments::intervention::Intervention;
use crate::experiments::runner::{SampleError, SampleErrorKind};

fn probe(samples: Vec<SampleState>) -> ProbeRun {
    ProbeRun {
        info: ProbeInfo {
            label: "replay from 's4'".to_owned(),
            intervention: Intervention::Replay {
                from: StepId::from("s4"),
                patch: None,
            },
            asked: Some(Target::Step(StepId::from("s4"))),
            samples: samples.len(),
        },
        spent: vec![None; samples.len()],
        samples,
        result: None,
        claim: None,
    }
}

fn errored() -> SampleState {
    SampleState::Done(SampleEnd::Errored {
        error: SampleError {
            kind: SampleErrorKind::Exit,
            message: "exit status 2".to_owned(),
            stderr_tail: "stand_in.py: no scenario for run 'cal-0007'".to_owned(),
        },
        saved: Saved::yes(),
    })
}

fn job(state: JobState, samples: Vec<SampleState>) -> Job {
    Job {
        id: JobId(1),
        request: Request::Replay {
            from: StepId::from("s4"),
            patch: None,
        },
        label: "replay from 's4'".to_owned(),
        probes: vec![probe(samples)],
        state,
        cohort: None,
        outcome: None,
    }
}

/// Issue 26: "3 not run" showed while three samples showed as running.
#[test]
fn samples_shown_running_are_counted_running() {
    let p = probe(vec![
        SampleState::Running,
        SampleState::Running,
        SampleState::Held("another tdn-tui holds the lock".to_owned()),
        SampleState::Waiting,
    ]);
    let c = p.counts();
    assert_eq!((c.running, c.not_run), (3, 1));
}

/// Issue 26: a prove-it hint never promises what cannot work.
#[test]
fn the_pane_says_when_no_re_run_can_work_from_here() {
    let mut ex = ExperimentsState::default();
    assert!(
        ex.cannot_run("cal-0007")
            .is_some_and(|w| w.contains("no runner is configured") && w.contains("--runner")),
        "no runner"
    );
    ex.runner = RunnerReach::Only(vec!["refund-outdated-policy".to_owned()]);
    let why = ex.cannot_run("cal-0007").expect("not covered");
    assert!(why.contains("re-runs only 1 other run"), "{why}");
    assert_eq!(ex.cannot_run("refund-outdated-policy"), None);
    ex.runner = RunnerReach::Any;
    assert_eq!(ex.cannot_run("cal-0007"), None);
    // The last job on the run failed on every sample: the next hint says so.
    ex.jobs.push(job(
        JobState::Ended(JobEnd::Finished),
        vec![errored(), errored(), errored()],
    ));
    let why = ex.cannot_run("cal-0007").expect("every sample failed");
    assert!(
        why.contains("failed on every sample of job #1 (exit status 2)"),
        "{why}"
    );
    // One sample that answered is enough for the hint to stand.
    ex.jobs.push(job(
        JobState::Ended(JobEnd::Finished),
        vec![errored(), SampleState::Running],
    ));
    assert_eq!(ex.cannot_run("cal-0007"), None);
}

//! The one event type of experiments: what a job reports as it runs, in the order things happen.
//! The session emits these; the command line prints them as progress, the screen renders them.
//! Nothing here decides a verdict or does I/O.

use crate::analysis::report::ProbeResult;
use crate::experiments::engine::{EngineError, Target};
use crate::experiments::intervention::Intervention;
use crate::experiments::ledger::Closed;
use crate::experiments::runner::{Cost, SampleError, Spent};
use crate::experiments::session::{ProbeId, SessionOutcome};
use crate::experiments::sink::{Receipt, SinkError};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

/// A job: one request run as one batch of the ledger. Numbered by whoever starts jobs (the
/// screen counts from 1 in a session; the command line runs job 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(pub u64);

/// Where events go.
pub type EventSender = UnboundedSender<Event>;

/// Something that happened in a job.
#[derive(Clone, Debug)]
pub struct Event {
    /// The job.
    pub job: JobId,
    /// What happened.
    pub kind: EventKind,
}

/// One probe of a started job, as the front ends show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeInfo {
    /// For people: `baseline`, `ablate 'u3'`...
    pub label: String,
    /// What its samples change.
    pub intervention: Intervention,
    /// What the user pointed at that this probe answers for (a suspect step, a unit), if any.
    pub asked: Option<Target>,
    /// Samples it runs.
    pub samples: usize,
}

/// Whether a finished sample reached the ledger.
#[derive(Clone, Debug, PartialEq)]
pub enum Saved {
    /// Durably recorded, with the trials it formed (or why it formed none).
    Yes(Receipt),
    /// Not saved, with why: shown marked "not saved"; it forms no trial.
    No(SinkError),
}

impl Saved {
    /// Saved, with nothing to say about trials.
    pub fn yes() -> Saved {
        Saved::Yes(Receipt::default())
    }
}

/// A sample that produced an answer, judged by the flip rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    /// The answer (untrusted text: print through `inert_line` or `inert_block`).
    pub output: String,
    /// The flip rule said the outcome changed.
    pub flipped: bool,
    /// Similarity to the recorded answer, when measured.
    pub similarity: Option<f64>,
    /// What it cost, as reported.
    pub cost: Cost,
    /// The recorded model call the runner re-sent alone to answer (its `replayed_call`), when
    /// it did not re-run the whole agent.
    pub replayed_call: Option<String>,
}

/// How one sample ended.
#[derive(Clone, Debug, PartialEq)]
pub enum SampleEnd {
    /// The agent answered.
    Answered {
        /// The judged answer.
        judged: Judged,
        /// Whether the ledger recorded it.
        saved: Saved,
    },
    /// No usable answer (never a flip).
    Errored {
        /// What went wrong, with the stderr tail.
        error: SampleError,
        /// Whether the ledger recorded it.
        saved: Saved,
    },
    /// Stopped by a cancel while it ran: its processes were killed; recorded as cancelled (an
    /// error sample that forms no trial) and counted for nothing.
    Cancelled {
        /// Why the job was cancelled, in words.
        why: String,
        /// Whether the ledger recorded it.
        saved: Saved,
    },
}

impl SampleEnd {
    /// Whether the ledger recorded it.
    pub fn saved(&self) -> &Saved {
        match self {
            SampleEnd::Answered { saved, .. }
            | SampleEnd::Errored { saved, .. }
            | SampleEnd::Cancelled { saved, .. } => saved,
        }
    }
}

/// How a job ended.
#[derive(Clone, Debug)]
pub enum JobEnd {
    /// Every probe ran.
    Finished,
    /// Cancelled (by the user, a quit or a signal): why. Running samples were stopped, with
    /// every process they started.
    Cancelled(String),
    /// It could not run, or stopped on an error.
    Failed(Arc<EngineError>),
}

/// Everything a job found: the session's outcome, what closing its batch appended to the
/// ledger, and the ledger's file.
#[derive(Clone, Debug)]
pub struct JobOutcome {
    /// How it ended.
    pub end: JobEnd,
    /// The session's verdicts, counts and costs (`None` when it never started).
    pub session: Option<SessionOutcome>,
    /// What closing the batch appended (`None` when it did not close).
    pub closed: Option<Closed>,
    /// The ledger the samples went to.
    pub ledger: Option<PathBuf>,
    /// What the job spent: its wall-clock time and its samples' reported costs (`None` when it
    /// never ran).
    pub spent: Option<Spent>,
}

/// What happened.
#[derive(Clone, Debug)]
pub enum EventKind {
    /// The job started: its probes, in order (baselines first).
    Started {
        /// Its probes.
        probes: Vec<ProbeInfo>,
        /// The batch its samples are saved under.
        cohort: String,
    },
    /// A sample's command was started.
    SampleStarted {
        /// Its probe.
        probe: ProbeId,
        /// Its seed.
        seed: u64,
    },
    /// A sample finished, but the ledger is locked by another process: it is held back until it
    /// is written (its `SampleFinished` follows then).
    SampleHeld {
        /// Its probe.
        probe: ProbeId,
        /// Its seed.
        seed: u64,
        /// Who holds the lock and for how long.
        why: String,
    },
    /// A sample ended and was offered to the ledger first.
    SampleFinished {
        /// Its probe.
        probe: ProbeId,
        /// Its seed.
        seed: u64,
        /// How it ended.
        end: SampleEnd,
        /// The time the runner took, and what the agent reported spending.
        spent: Spent,
    },
    /// Every sample of a probe and of its baseline finished: its flip verdict. Cost verdicts
    /// and classes need the whole tier and come with [`EventKind::Done`].
    ProbeVerdict {
        /// The probe.
        probe: ProbeId,
        /// Its result (for a baseline: counts and similarity, no verdict).
        result: ProbeResult,
        /// The verdict in words (`None` for a baseline).
        claim: Option<String>,
    },
    /// The job is over.
    Done(Arc<JobOutcome>),
}

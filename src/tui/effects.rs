//! All the screen's I/O and heavy work, described by [`Effect`] values that `update` returns:
//! preparing a step's detail (syntect), searching, copying to the clipboard, opening a run from
//! the picker, analysing it again with the judge, and talking to the experiment port. Terminal
//! effects (quit, suspend, mouse) are carried out by the event loop; everything else runs here,
//! off the UI task in the live screen and in line when headless, and reports back as
//! [`Action`]s.

use super::action::Action;
use super::app::Document;
use super::compare::AgainstPick;
use super::find::{self, SearchHits};
use super::panes::detail;
use super::theme::Theme;
use crate::analysis::model::RunStatus;
use crate::config::ViewerCommand;
use crate::experiments::engine::port::ExperimentPort;
use crate::experiments::engine::{Plan, Request};
use crate::experiments::event::{Event, EventKind, EventSender, JobEnd, JobId, JobOutcome};
use base64::Engine;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

/// Largest text sent to the terminal clipboard (OSC 52); larger copies go to the file only.
pub const MAX_OSC52_BYTES: usize = 100_000;
/// The file every copy is also written to, in the fallback folder.
pub const COPY_FILE: &str = "tdn-tui-copy.txt";

/// Which outside program shows a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum External {
    /// The pager (`Viewers::pager`).
    Pager,
    /// The editor (`Viewers::editor`).
    Editor,
}

/// What to copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyWhat {
    /// The step's output (JSON pretty-printed).
    Output,
    /// The whole step as JSON.
    Step,
}

/// Work for the outside world.
#[derive(Clone)]
pub enum Effect {
    /// Leave (the loop restores the terminal).
    Quit,
    /// Suspend to the shell.
    Suspend,
    /// Turn mouse capture on or off.
    SetMouse(bool),
    /// Lay out a step's detail for a width.
    PrepareDetail {
        /// The document.
        doc: Arc<Document>,
        /// The step.
        step: usize,
        /// The width.
        width: u16,
        /// Laid out in full (nothing folded).
        full: bool,
    },
    /// Search the steps' labels.
    Search {
        /// The document.
        doc: Arc<Document>,
        /// The query.
        query: String,
        /// The hits in force, reused when they answer a prefix of `query`.
        previous: Arc<SearchHits>,
    },
    /// Run a timeline filter over the steps.
    Filter {
        /// The document.
        doc: Arc<Document>,
        /// The filter as typed.
        query: String,
    },
    /// Read the run's file again and analyse the run at this position (the event loop does it,
    /// with the reloader it was given).
    Reload(usize),
    /// Show a step in the user's pager or editor (the event loop hands the terminal over).
    External {
        /// Which program.
        program: External,
        /// Its command, as the settings resolved it.
        command: ViewerCommand,
        /// The document.
        doc: Arc<Document>,
        /// The step.
        step: usize,
    },
    /// Write the diagnosis as Markdown to a file.
    Share {
        /// The document.
        doc: Arc<Document>,
        /// The session's and the ledger's verdicts.
        verdicts: Vec<crate::analysis::report::VerdictRow>,
        /// The folder to write it to.
        dir: PathBuf,
    },
    /// Copy part of a step to the clipboard.
    Copy {
        /// The document.
        doc: Arc<Document>,
        /// The step.
        step: usize,
        /// Which part.
        what: CopyWhat,
    },
    /// Analyse and open the run at this position of the file.
    OpenRun(usize),
    /// Analyse the run at this position again, asking the judge.
    Judge(usize),
    /// Analyse the run at this position again with this outcome.
    Outcome(usize, RunStatus),
    /// Analyse the run at this position against a good run.
    Compare(usize, AgainstPick),
    /// Experiments from now on use this document's report (the open run, judged).
    Reopen(Arc<Document>),
    /// Ask the engine what a request would run (off the UI task: plans read the whole run).
    Plan(Request),
    /// Start a plan (as it was planned and confirmed).
    Launch {
        /// Its job number.
        job: JobId,
        /// The plan.
        plan: Box<Plan>,
    },
    /// Cancel a job, saying why.
    Cancel(JobId, String),
    /// Read the ledger's earlier trials.
    LoadLedger,
    /// Aggregate these open batches of the ledger, then read it again.
    Aggregate(Vec<String>),
}

impl std::fmt::Debug for Effect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Effect::Quit => f.write_str("Quit"),
            Effect::Suspend => f.write_str("Suspend"),
            Effect::SetMouse(on) => write!(f, "SetMouse({on})"),
            Effect::PrepareDetail { step, width, .. } => {
                write!(f, "PrepareDetail({step}, {width})")
            }
            Effect::Search { query, .. } => write!(f, "Search({query:?})"),
            Effect::Filter { query, .. } => write!(f, "Filter({query:?})"),
            Effect::Reload(i) => write!(f, "Reload({i})"),
            Effect::External { program, step, .. } => write!(f, "External({program:?}, {step})"),
            Effect::Share { verdicts, .. } => write!(f, "Share({} verdicts)", verdicts.len()),
            Effect::Copy { step, what, .. } => write!(f, "Copy({step}, {what:?})"),
            Effect::OpenRun(i) => write!(f, "OpenRun({i})"),
            Effect::Judge(i) => write!(f, "Judge({i})"),
            Effect::Outcome(i, s) => write!(f, "Outcome({i}, {})", s.as_str()),
            Effect::Compare(i, p) => write!(f, "Compare({i}, {p:?})"),
            Effect::Reopen(d) => write!(f, "Reopen({:?})", d.run.id),
            Effect::Plan(r) => write!(f, "Plan({r:?})"),
            Effect::Launch { job, plan } => write!(f, "Launch({job:?}, {:?})", plan.request),
            Effect::Cancel(j, why) => write!(f, "Cancel({j:?}, {why:?})"),
            Effect::LoadLedger => f.write_str("LoadLedger"),
            Effect::Aggregate(c) => write!(f, "Aggregate({c:?})"),
        }
    }
}

/// Opens the run at a position of the file (analysing it).
pub type Opener = dyn Fn(usize) -> Result<Document, String> + Send + Sync;

/// Analyses the run at a position of the file again with the outcome the user set (and keeps
/// that outcome for the run from then on: the judge and a reload use it too).
pub type OutcomeSetter = dyn Fn(usize, RunStatus) -> Result<Document, String> + Send + Sync;

/// Analyses the run at a position of the file against a good run (another run of the file, or
/// a file's): the document holds the comparison, and its report the divergence as evidence.
pub type Comparer = dyn Fn(usize, &AgainstPick) -> Result<Document, String> + Send + Sync;

/// Where copies go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Clipboard {
    /// OSC 52 to the terminal, plus a copy in this folder.
    Terminal(PathBuf),
    /// No terminal (`--render`, tests): copying is refused.
    None,
}

/// The experiments and the openers of runs that effects reach, as the screen starts with them.
pub struct Handles {
    /// The experiment engine.
    pub port: Arc<dyn ExperimentPort>,
    /// Opens runs chosen in the picker.
    pub opener: Arc<Opener>,
    /// Analyses a run again asking the configured judge (`None` without a judge).
    pub judged: Option<Arc<Opener>>,
    /// Analyses a run again with the outcome the user set (`None`: not possible).
    pub outcome: Option<Arc<OutcomeSetter>>,
    /// Analyses a run against a good run (`None`: not possible).
    pub comparer: Option<Arc<Comparer>>,
}

/// What effects need from the outside.
pub struct EffectContext {
    /// The theme, for laying out details.
    pub theme: Arc<Theme>,
    /// The experiment engine.
    pub port: Arc<dyn ExperimentPort>,
    /// Opens runs chosen in the picker.
    pub opener: Arc<Opener>,
    /// Analyses a run again asking the configured judge (`None` without a judge).
    pub judged: Option<Arc<Opener>>,
    /// Analyses a run again with the outcome the user set (`None`: not possible, e.g. a saved
    /// report is shown).
    pub outcome: Option<Arc<OutcomeSetter>>,
    /// Analyses a run against a good run (`None`: not possible, e.g. a saved report is shown).
    pub comparer: Option<Arc<Comparer>>,
    /// Where experiment events go.
    pub events: EventSender,
    /// Where copies go.
    pub clipboard: Clipboard,
}

impl EffectContext {
    /// The context of effects drawn with `theme`, reaching `handles`, sending experiment events
    /// to `events` and copies to `clipboard`.
    pub fn new(
        theme: Arc<Theme>,
        handles: Handles,
        events: EventSender,
        clipboard: Clipboard,
    ) -> EffectContext {
        EffectContext {
            theme,
            port: handles.port,
            opener: handles.opener,
            judged: handles.judged,
            outcome: handles.outcome,
            comparer: handles.comparer,
            events,
            clipboard,
        }
    }
}

/// How a file looked: its length and modification time.
pub type FileStamp = (u64, Option<std::time::SystemTime>);

/// The stamp of a file now (`None` when it cannot be read).
pub fn stamp(path: &std::path::Path) -> Option<FileStamp> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()))
}

/// Carries out a non-terminal effect in line and returns the actions it produced.
pub fn run_now(effect: Effect, ctx: &EffectContext) -> Vec<Action> {
    match effect {
        Effect::Quit
        | Effect::Suspend
        | Effect::SetMouse(_)
        | Effect::External { .. }
        | Effect::Reload(_) => Vec::new(),
        Effect::Filter { doc, query } => {
            let result = find::filter(&doc, &query).map(Arc::new);
            vec![Action::FilterResults(query, result)]
        }
        Effect::Share { doc, verdicts, dir } => vec![share(&doc, verdicts, &dir)],
        Effect::PrepareDetail {
            doc,
            step,
            width,
            full,
        } => vec![Action::DetailReady(Arc::new(detail::build(
            &doc, step, width, full, &ctx.theme,
        )))],
        Effect::Search {
            doc,
            query,
            previous,
        } => vec![Action::SearchResults(Arc::new(find::search(
            &doc,
            &query,
            Some(&previous),
        )))],
        Effect::Copy { doc, step, what } => vec![copy(&doc, step, what, &ctx.clipboard)],
        Effect::OpenRun(i) => match (ctx.opener)(i) {
            Ok(d) => {
                ctx.port
                    .open(d.run.clone(), d.report.clone(), d.source.clone());
                vec![
                    Action::Opened(Arc::new(d)),
                    Action::Message(format!("opened run {i} of the file")),
                ]
            }
            Err(e) => vec![Action::OpenFailed(e)],
        },
        // The port takes the judged report only once `update` has seen that its run is still
        // the open one (Effect::Reopen).
        Effect::Judge(i) => match ctx.judged.as_ref().map(|j| j(i)) {
            Some(Ok(d)) => vec![Action::Judged(i, Arc::new(d))],
            Some(Err(e)) => vec![Action::JudgeFailed(i, e)],
            None => vec![Action::JudgeFailed(i, "no judge is configured".to_owned())],
        },
        Effect::Outcome(i, status) => match ctx.outcome.as_ref().map(|o| o(i, status)) {
            Some(Ok(d)) => vec![Action::OutcomeSet(i, Arc::new(d))],
            Some(Err(e)) => vec![Action::OutcomeFailed(i, e)],
            None => vec![Action::OutcomeFailed(
                i,
                "a saved report is shown: analyse the run again to set its outcome".to_owned(),
            )],
        },
        Effect::Compare(i, pick) => match ctx.comparer.as_ref().map(|c| c(i, &pick)) {
            Some(Ok(d)) => vec![Action::Compared(i, Arc::new(d))],
            Some(Err(e)) => vec![Action::CompareFailed(e)],
            None => vec![Action::CompareFailed(
                "a saved report is shown: open the run with --against GOOD to compare it"
                    .to_owned(),
            )],
        },
        Effect::Reopen(d) => {
            ctx.port
                .open(d.run.clone(), d.report.clone(), d.source.clone());
            Vec::new()
        }
        Effect::Plan(request) => {
            let plan = ctx.port.plan(request.clone());
            vec![Action::Planned(Arc::new((request, plan)))]
        }
        Effect::Launch { job, plan } => {
            let ledger = Some(plan.subject.ledger.path.clone());
            match ctx.port.launch(job, *plan, ctx.events.clone()) {
                Ok(()) => Vec::new(),
                Err(e) => vec![Action::Experiment(Arc::new(Event {
                    job,
                    kind: EventKind::Done(Arc::new(JobOutcome {
                        end: JobEnd::Failed(Arc::new(e)),
                        session: None,
                        closed: None,
                        ledger,
                        spent: None,
                    })),
                }))],
            }
        }
        Effect::Cancel(job, why) => {
            ctx.port.cancel(job, &why);
            vec![Action::Message(format!(
                "cancelling job #{}: its samples are being stopped with every process they started",
                job.0
            ))]
        }
        Effect::LoadLedger => vec![Action::LedgerLoaded(Arc::new(ctx.port.evidence()))],
        Effect::Aggregate(cohorts) => vec![
            match ctx.port.aggregate(&cohorts) {
                Ok(m) => Action::Message(m),
                Err(e) => Action::Problem(format!("nothing was aggregated: {e}")),
            },
            Action::LedgerLoaded(Arc::new(ctx.port.evidence())),
        ],
    }
}

/// Carries out a non-terminal effect off the UI task and sends what it produced to `tx`.
pub async fn run_effect(effect: Effect, ctx: Arc<EffectContext>, tx: UnboundedSender<Action>) {
    let result = tokio::task::spawn_blocking(move || run_now(effect, &ctx)).await;
    match result {
        Ok(actions) => {
            for a in actions {
                let _ = tx.send(a);
            }
        }
        Err(e) => {
            tracing::error!("an effect failed: {e}");
            let _ = tx.send(Action::Problem(format!(
                "internal error while working: {e}"
            )));
        }
    }
}

/// Writes the diagnosis of `doc` to its file in `dir`.
fn share(
    doc: &Document,
    verdicts: Vec<crate::analysis::report::VerdictRow>,
    dir: &std::path::Path,
) -> Action {
    let from = (!verdicts.is_empty()).then(|| "this session and the run's ledger".to_owned());
    let text = super::share::markdown(doc, verdicts, from);
    let path = super::share::file_for(dir, doc.source.as_deref(), &doc.run.id);
    match std::fs::write(&path, text.as_bytes()) {
        Ok(()) => Action::Message(format!(
            "wrote the diagnosis as Markdown to '{}' ({} lines): paste it into a bug",
            path.display(),
            text.lines().count()
        )),
        Err(e) => Action::Problem(format!(
            "could not write the diagnosis to '{}': {e}",
            path.display()
        )),
    }
}

/// The text a copy takes.
pub fn copy_text(doc: &Document, step: usize, what: CopyWhat) -> Option<String> {
    let s = doc.run.steps.get(step)?;
    Some(match what {
        CopyWhat::Output => match &s.output {
            Some(crate::analysis::model::Json::String(t)) => t.to_string(),
            Some(v) => serde_json::to_string_pretty(v).unwrap_or_default(),
            None => return None,
        },
        CopyWhat::Step => serde_json::to_string_pretty(s).unwrap_or_default(),
    })
}

fn copy(doc: &Document, step: usize, what: CopyWhat, clip: &Clipboard) -> Action {
    let Some(text) = copy_text(doc, step, what) else {
        return Action::Problem(format!("{} has no output to copy", doc.describe(step)));
    };
    let Clipboard::Terminal(dir) = clip else {
        return Action::Problem("copying needs a terminal; nothing was copied".to_owned());
    };
    let chars = text.chars().count();
    let osc = if text.len() > MAX_OSC52_BYTES {
        Err(format!(
            "too large for the terminal clipboard ({} bytes)",
            text.len()
        ))
    } else {
        let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        let mut out = std::io::stdout().lock();
        write!(out, "\u{1b}]52;c;{b64}\u{7}")
            .and_then(|()| out.flush())
            .map_err(|e| format!("the terminal write failed ({e})"))
    };
    let path = dir.join(COPY_FILE);
    let file = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&path, text.as_bytes()))
        .map_err(|e| format!("cannot write '{}' ({e})", path.display()));
    match (osc, file) {
        (Ok(()), Ok(())) => Action::Message(format!(
            "sent {chars} characters to the terminal clipboard (OSC 52; some terminals ignore it) and saved them to '{}'",
            path.display()
        )),
        (Ok(()), Err(f)) => Action::Message(format!(
            "sent {chars} characters to the terminal clipboard (OSC 52; some terminals ignore it); the file copy failed: {f}"
        )),
        (Err(o), Ok(())) => Action::Message(format!(
            "not sent to the clipboard: {o}; saved {chars} characters to '{}'",
            path.display()
        )),
        (Err(o), Err(f)) => Action::Problem(format!("copy failed: {o}; {f}")),
    }
}

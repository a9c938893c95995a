//! `tdn-tui RUN`: open the debugger (or, with `--render WxH`, print its screen as text). The live
//! screen takes the terminal at once and shows progress while the file is loaded and analysed on
//! a thread of its own; a loading problem gives the terminal back and is reported on stderr with
//! exit 2 (with `--render`, or without a terminal, before anything is drawn). The screen itself is
//! started by `tui::start`, and while it is up logs go to a file and nothing is printed.

mod reports;

use super::args::{Color as ColorArg, InputArgs, OpenArgs, OutcomeArgs};
use super::common::{load_options, reference_choice, settle_outcome, write_stdout};
use crate::analysis::compare::compare;
use crate::analysis::cost::Prices;
use crate::analysis::import::SourceFormat;
use crate::analysis::influence::{ConfidenceOptions, Embedder};
use crate::analysis::judge::Judge;
use crate::analysis::load;
use crate::analysis::model::{Run, RunStatus};
use crate::analysis::progress::Progress;
use crate::analysis::report::{Against, AnalyzeOptions, ReferenceChoice, Report, analyze_run};
use crate::config::{ColorChoice, Overrides, Settings};
use crate::experiments::command_judge::CommandJudge;
use crate::tui::app::Document;
use crate::tui::compare::{AgainstPick, AgainstView};
use crate::tui::effects::{Comparer, Opener, OutcomeSetter};
use crate::tui::headless::{parse_keys, parse_size};
use crate::tui::start::{Ended, Ready, Start, StartLoading, choice, start, start_loading};
use anyhow::bail;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

/// Runs the subcommand.
pub fn run(args: &OpenArgs) -> anyhow::Result<ExitCode> {
    let Some(path) = &args.run else {
        bail!(
            "no run given: write 'tdn-tui RUN' with a recorded run (tdn-tui --help lists the commands)"
        );
    };
    let mut settings = Settings::resolve(&Overrides {
        config: args.config.config.clone(),
        yes: args.config.yes,
        runner: args.runner.clone(),
        theme: args.theme.clone(),
        color: args.color.map(|c| match c {
            ColorArg::Auto => ColorChoice::Auto,
            ColorArg::Always => ColorChoice::Always,
            ColorArg::Never => ColorChoice::Never,
        }),
        ..Overrides::default()
    })?;
    // `--color always` is the user's word over `NO_COLOR`, which crossterm also reads on its
    // own and would otherwise obey by writing no colour at all (the colour theme's selected row
    // would lose its highlight).
    if settings.ui.color == ColorChoice::Always {
        crossterm::style::force_color_output(true);
    }
    let render = args
        .render
        .as_deref()
        .map(parse_size)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let keys = parse_keys(args.keys.as_deref().unwrap_or("")).map_err(anyhow::Error::msg)?;
    // Without a terminal (and no --render) a file that cannot be opened says so first; only a
    // good one needs a terminal.
    if render.is_none() && !std::io::stdout().is_terminal() {
        let runs = load::load_path(path, &load_options(&args.analysis.input))?;
        if runs.is_empty() {
            bail!("{}: the file holds no run", path.display());
        }
        if let Some(p) = &args.report {
            reports::read_reports(p, &runs)?;
        }
        bail!("the debugger needs a terminal; to print its screen as text, add --render 120x40");
    }
    let reference = reference_choice(&args.analysis.reference)?;
    // The screen analyses the run as it opens: a command embedder from the current folder's
    // tdn.toml is not the user's word yet, so it is left out unless --yes was given.
    let mut messages: Vec<String> = super::common::embedder_consent(&mut settings)
        .into_iter()
        .collect();
    if settings.judge.is_some() && args.report.is_none() {
        messages.push(
            "a judge is configured: the screen shows the rules' verdict; J asks the judge"
                .to_owned(),
        );
    }
    let embedder: Arc<dyn Embedder> =
        Arc::from(crate::experiments::embedder::from_settings(&settings));
    if args.report.is_some() && args.against.against.is_some() {
        bail!(
            "--against analyses the run again against the good run, and --report shows a saved report as it is: give one of them"
        );
    }
    let against = super::against::GoodRuns::load(&args.against)?;
    let work = Work {
        against,
        path: path.clone(),
        input: args.analysis.input.clone(),
        report: args.report.clone(),
        reference,
        outcome: args.analysis.outcome.clone(),
        embedder,
        confidence: settings.confidence,
        prices: settings.prices.clone(),
        // Asking the judge analyses the run again with it; the screen shows the command and
        // asks before its first use, which is the user's consent for a command from the current
        // folder. A saved report (`--report`) is shown as it is.
        judge: match (&settings.judge, &args.report) {
            (Some(cmd), None) => Some(CommandJudge::new(
                cmd.text.clone(),
                settings.judge_timeout_s,
            )),
            _ => None,
        },
    };
    let ended = match render {
        None => {
            // The live screen takes the terminal at once and shows the load's progress; the run
            // is loaded and analysed on a thread of its own (issue 11).
            let progress = Arc::new(Progress::new());
            let (tx, rx) = tokio::sync::oneshot::channel();
            let counted = progress.clone();
            std::thread::spawn(move || {
                let ready = work.prepare(&counted, true).map_err(|e| format!("{e:#}"));
                let _ = tx.send(ready);
            });
            start_loading(StartLoading {
                settings,
                file: path.display().to_string(),
                progress,
                done: rx,
                messages,
            })?
        }
        Some(size) => {
            let ready = work.prepare(&Progress::new(), false)?;
            start(Start {
                settings,
                runs: ready.runs,
                opener: ready.opener,
                judged: ready.judged,
                reloader: ready.reloader,
                outcome: ready.outcome,
                comparer: ready.comparer,
                messages,
                render: Some(size),
                keys,
                index: ready.index,
            })?
        }
    };
    // A stop signal ends the screen as it ends any program (128 + the signal), once its
    // experiments are stopped; the screen is still printed when it can be.
    let signal = match ended {
        Ended::Rendered(text, signal) => {
            if let Err(e) = write_stdout(&text)
                && signal.is_none()
            {
                return Err(e);
            }
            signal
        }
        Ended::Left(signal) => signal,
    };
    Ok(match signal {
        Some(s) => ExitCode::from(u8::try_from(128 + s).unwrap_or(130)),
        None => ExitCode::SUCCESS,
    })
}

/// What opening the file takes, handed to the thread that does it.
struct Work {
    /// `--against`: the runs of the good file.
    against: Option<super::against::GoodRuns>,
    path: std::path::PathBuf,
    input: InputArgs,
    report: Option<std::path::PathBuf>,
    reference: ReferenceChoice,
    outcome: OutcomeArgs,
    embedder: Arc<dyn Embedder>,
    confidence: ConfidenceOptions,
    prices: Prices,
    judge: Option<CommandJudge>,
}

impl Work {
    /// Loads the file, reads `--report` if given, and (with `open_first`, for a file of one run)
    /// analyses its run, counting in `progress`.
    fn prepare(self, progress: &Progress, open_first: bool) -> anyhow::Result<Ready> {
        let Work {
            against,
            path,
            input,
            report,
            reference,
            outcome,
            embedder,
            confidence,
            prices,
            judge,
        } = self;
        let mut loaded = load::load_path_with_progress(&path, &load_options(&input), progress)?;
        for l in &mut loaded {
            settle_outcome(l, &outcome, &reference);
        }
        if loaded.is_empty() {
            bail!("{}: the file holds no run", path.display());
        }
        let reports = match &report {
            Some(p) => Some(Arc::new(reports::read_reports(p, &loaded)?)),
            None => None,
        };
        let choices = loaded.iter().map(choice).collect();
        let index = input.index.zip(loaded.first().map(|l| l.source_format));
        let analysis = Arc::new(Analysis {
            runs: loaded
                .into_iter()
                .map(|l| OpenRun {
                    run: Arc::new(l.run),
                    warnings: l.warnings,
                    source_format: l.source_format,
                })
                .collect(),
            reference,
            embedder,
            confidence,
            prices,
            source: std::path::absolute(&path).unwrap_or_else(|_| path.clone()),
            saved: report.clone(),
            given: std::sync::Mutex::new(std::collections::HashMap::new()),
            against,
            picked: std::sync::Mutex::new(std::collections::HashMap::new()),
        });
        let opener: Arc<Opener> = {
            let analysis = analysis.clone();
            let reports = reports.clone();
            Arc::new(
                move |i: usize| match reports.as_ref().and_then(|r| r.get(i)) {
                    Some(r) => analysis.with_report(i, r.clone()),
                    // The screen opens on the rules' verdict; J asks the judge.
                    None => analysis.open(i, None, &Progress::new()),
                },
            )
        };
        // When the file changes (a run still being written), it is read and analysed again.
        let reloader: Arc<Opener> = {
            let (path, input) = (path.clone(), input.clone());
            let analysis = analysis.clone();
            Arc::new(move |i: usize| {
                let runs =
                    load::load_path(&path, &load_options(&input)).map_err(|e| e.to_string())?;
                let mut loaded = runs
                    .into_iter()
                    .nth(i)
                    .ok_or_else(|| format!("the file no longer holds a run at position {i}"))?;
                settle_outcome(&mut loaded, &outcome, &analysis.reference);
                if let Some(status) = analysis.given(i) {
                    loaded.run.give_outcome(status, SET_IN_SCREEN);
                }
                analysis.open_loaded(i, loaded)
            })
        };
        let first = if open_first && analysis.runs.len() == 1 {
            Some(match reports.as_ref().and_then(|r| r.first()) {
                Some(r) => analysis.with_report(0, r.clone()),
                None => analysis.open(0, None, progress),
            })
            .transpose()
            .map_err(anyhow::Error::msg)?
        } else {
            None
        };
        // The outcome the user sets with the screen's key is kept for the run: opening it again,
        // asking the judge and reloading the file use it too. Not for a saved report.
        let outcome: Option<Arc<OutcomeSetter>> = match reports {
            Some(_) => None,
            None => {
                let analysis = analysis.clone();
                Some(Arc::new(move |i: usize, status: RunStatus| {
                    analysis.set_given(i, status);
                    analysis.open(i, None, &Progress::new())
                }))
            }
        };
        // Comparing with a run picked in the screen analyses the open run again against it (not
        // for a saved report, which is shown as it is).
        let comparer: Option<Arc<Comparer>> = match reports {
            Some(_) => None,
            None => {
                let analysis = analysis.clone();
                Some(Arc::new(move |i: usize, pick: &AgainstPick| {
                    analysis.compare_with(i, pick)
                }))
            }
        };
        let judged: Option<Arc<Opener>> = judge.map(|judge| {
            Arc::new(move |i: usize| analysis.open(i, Some(&judge), &Progress::new()))
                as Arc<Opener>
        });
        Ok(Ready {
            runs: choices,
            first,
            opener,
            judged,
            reloader: Some(reloader),
            outcome,
            comparer,
            index,
        })
    }
}

/// A run of the file, shared with the screen once opened.
struct OpenRun {
    run: Arc<Run>,
    warnings: Vec<load::Warning>,
    source_format: SourceFormat,
}

/// What opening a run of the file needs: the runs and how to analyse them.
struct Analysis {
    runs: Vec<OpenRun>,
    reference: ReferenceChoice,
    embedder: Arc<dyn Embedder>,
    confidence: ConfidenceOptions,
    prices: Prices,
    source: std::path::PathBuf,
    /// `--report`: the file the reports were read from.
    saved: Option<std::path::PathBuf>,
    /// The outcome set with the screen's key, by position in the file.
    given: std::sync::Mutex<std::collections::HashMap<usize, RunStatus>>,
    /// `--against`: the runs of the good file.
    against: Option<super::against::GoodRuns>,
    /// The good run picked in the screen for a run (by position), and where it came from.
    picked: std::sync::Mutex<std::collections::HashMap<usize, (Arc<Run>, String)>>,
}

/// How `status_why` says the outcome was set with the screen's key.
const SET_IN_SCREEN: &str = "set in the screen to";

impl Analysis {
    fn run(&self, i: usize) -> Result<&OpenRun, String> {
        self.runs
            .get(i)
            .ok_or_else(|| format!("the file has no run at position {i}"))
    }

    fn options<'a>(&'a self, judge: Option<&'a dyn Judge>) -> AnalyzeOptions<'a> {
        AnalyzeOptions {
            reference: self.reference.clone(),
            embedder: self.embedder.as_ref(),
            confidence: self.confidence,
            judge,
            against: None,
            prices: &self.prices,
        }
    }

    /// The good run for the run at `i`: the one picked in the screen, else `--against`'s (a
    /// run of the same task that succeeded, for a file of several); `None` without either.
    fn good_for(&self, i: usize, bad: &Run) -> Result<Option<(Arc<Run>, String)>, String> {
        if let Some(p) = self.picked.lock().ok().and_then(|m| m.get(&i).cloned()) {
            return Ok(Some(p));
        }
        match &self.against {
            None => Ok(None),
            Some(g) => g
                .pick(bad)
                .map(|p| Some((Arc::new(p.run.clone()), p.label))),
        }
    }

    /// Analyses `run` (the run at `i`) against its good run, if it has one, and opens it.
    fn analysed(
        &self,
        i: usize,
        run: Arc<Run>,
        warnings: &[load::Warning],
        source_format: SourceFormat,
        judge: Option<&dyn Judge>,
        progress: &Progress,
    ) -> Result<Document, String> {
        let good = self.good_for(i, &run)?;
        let comparison = good.as_ref().map(|(g, _)| compare(g, &run));
        let mut opts = self.options(judge);
        opts.against = good
            .as_ref()
            .zip(comparison.as_ref())
            .map(|((g, _), c)| Against {
                run: g.as_ref(),
                comparison: c,
            });
        let report = analyze_run(&run, warnings, source_format, &opts, progress);
        let mut doc = Document::from_shared(run, report, Some(self.source.clone()));
        doc.against = good.zip(comparison).map(|((good, label), comparison)| {
            Arc::new(AgainstView {
                good,
                label,
                comparison,
            })
        });
        Ok(doc)
    }

    /// Compares the run at `i` with the good run picked in the screen (kept for the run from
    /// then on) and opens it analysed against it.
    fn compare_with(&self, i: usize, pick: &AgainstPick) -> Result<Document, String> {
        let bad = self.run(i)?.run.clone();
        let good = match pick {
            AgainstPick::Run(j) => {
                let r = self.run(*j)?;
                (r.run.clone(), format!("run {j} of the file"))
            }
            AgainstPick::File(path) => {
                let runs = super::against::GoodRuns::read(std::path::Path::new(path), None)
                    .map_err(|e| format!("{e:#}"))?;
                let p = runs.pick(&bad)?;
                (Arc::new(p.run.clone()), p.label)
            }
        };
        if let Ok(mut m) = self.picked.lock() {
            m.insert(i, good);
        }
        self.open(i, None, &Progress::new())
    }

    /// Analyses a run read again from the file and opens it.
    fn open_loaded(&self, i: usize, loaded: load::Loaded) -> Result<Document, String> {
        let run = Arc::new(loaded.run);
        self.analysed(
            i,
            run,
            &loaded.warnings,
            loaded.source_format,
            None,
            &Progress::new(),
        )
    }

    /// The outcome set with the screen's key for the run at `i`.
    fn given(&self, i: usize) -> Option<RunStatus> {
        self.given.lock().ok().and_then(|g| g.get(&i).copied())
    }

    /// Keeps the outcome set with the screen's key for the run at `i`.
    fn set_given(&self, i: usize, status: RunStatus) {
        if let Ok(mut g) = self.given.lock() {
            g.insert(i, status);
        }
    }

    /// Analyses the run at `i` (asking `judge` when given) and opens it. A run whose outcome was
    /// set with the screen's key is analysed as a copy with that outcome.
    fn open(
        &self,
        i: usize,
        judge: Option<&dyn Judge>,
        progress: &Progress,
    ) -> Result<Document, String> {
        let r = self.run(i)?;
        let run = match self.given(i) {
            Some(status) => {
                let mut copy = (*r.run).clone();
                copy.give_outcome(status, SET_IN_SCREEN);
                Arc::new(copy)
            }
            None => r.run.clone(),
        };
        let mut doc = self.analysed(i, run, &r.warnings, r.source_format, judge, progress)?;
        doc.saved_report.clone_from(&self.saved);
        Ok(doc)
    }

    /// Opens the run at `i` with a report already made (the run is shared, not copied).
    fn with_report(&self, i: usize, report: Report) -> Result<Document, String> {
        let r = self.run(i)?;
        let mut doc = Document::from_shared(r.run.clone(), report, Some(self.source.clone()));
        doc.saved_report.clone_from(&self.saved);
        Ok(doc)
    }
}

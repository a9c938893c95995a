//! `tdn-tui RUN`: open the debugger (or, with `--render WxH`, print its screen as text). Loading
//! problems are reported on stderr with exit 2 before the terminal is touched; the screen itself
//! is started by `tui::start`, and while it is up logs go to a file and nothing is printed.

mod reports;

use super::args::{Color as ColorArg, OpenArgs};
use super::common::{load_options, reference_choice, write_stdout};
use crate::analysis::influence::{ConfidenceOptions, Embedder};
use crate::analysis::judge::Judge;
use crate::analysis::load;
use crate::analysis::report::{AnalyzeOptions, ReferenceChoice, Report, analyze};
use crate::config::{ColorChoice, Overrides, Settings};
use crate::experiments::command_judge::CommandJudge;
use crate::tui::app::Document;
use crate::tui::effects::Opener;
use crate::tui::headless::{parse_keys, parse_size};
use crate::tui::start::{Ended, Start, choice, start};
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
    let render = args
        .render
        .as_deref()
        .map(parse_size)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let keys = parse_keys(args.keys.as_deref().unwrap_or("")).map_err(anyhow::Error::msg)?;
    let runs = Arc::new(load::load_path(path, &load_options(&args.input))?);
    if runs.is_empty() {
        bail!("{}: the file holds no run", path.display());
    }
    let reports = match &args.report {
        Some(p) => Some(Arc::new(reports::read_reports(p, &runs)?)),
        None => None,
    };
    // A file that cannot be opened says so first; only a good one needs a terminal.
    if render.is_none() && !std::io::stdout().is_terminal() {
        bail!("the debugger needs a terminal; to print its screen as text, add --render 120x40");
    }
    let reference = reference_choice(&args.reference)?;
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
    let analysis = Arc::new(Analysis {
        runs: runs.clone(),
        reference,
        embedder,
        confidence: settings.confidence,
        source: std::path::absolute(path).unwrap_or_else(|_| path.clone()),
    });
    let opener: Arc<Opener> = {
        let analysis = analysis.clone();
        Arc::new(
            move |i: usize| match reports.as_ref().and_then(|r| r.get(i)) {
                Some(r) => analysis.with_report(i, r.clone()),
                // The screen opens on the rules' verdict; J asks the judge.
                None => analysis.open(i, None),
            },
        )
    };
    // When the file changes (a run still being written), it is read and analysed again.
    let reloader: Arc<Opener> = {
        let (path, input) = (path.clone(), args.input.clone());
        let analysis = analysis.clone();
        Arc::new(move |i: usize| {
            let runs = load::load_path(&path, &load_options(&input)).map_err(|e| e.to_string())?;
            let loaded = runs
                .into_iter()
                .nth(i)
                .ok_or_else(|| format!("the file no longer holds a run at position {i}"))?;
            analysis.open_loaded(&loaded)
        })
    };
    // Asking the judge analyses the run again with it; the screen shows the command and asks
    // before its first use, which is the user's consent for a command from the current folder.
    // A saved report (`--report`) is shown as it is.
    let judged: Option<Arc<Opener>> = match (&settings.judge, &args.report) {
        (Some(cmd), None) => {
            let judge = CommandJudge::new(cmd.text.clone(), settings.judge_timeout_s);
            Some(Arc::new(move |i: usize| analysis.open(i, Some(&judge))))
        }
        _ => None,
    };
    let index = args.input.index.zip(runs.first().map(|l| l.source_format));
    let ended = start(Start {
        settings,
        runs: runs.iter().map(choice).collect(),
        opener,
        judged,
        reloader: Some(reloader),
        messages,
        render,
        keys,
        index,
    })?;
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

/// What opening a run of the file needs: the runs and how to analyse them.
struct Analysis {
    runs: Arc<Vec<load::Loaded>>,
    reference: ReferenceChoice,
    embedder: Arc<dyn Embedder>,
    confidence: ConfidenceOptions,
    source: std::path::PathBuf,
}

impl Analysis {
    fn loaded(&self, i: usize) -> Result<&load::Loaded, String> {
        self.runs
            .get(i)
            .ok_or_else(|| format!("the file has no run at position {i}"))
    }

    /// Analyses a run read again from the file and opens it.
    fn open_loaded(&self, loaded: &load::Loaded) -> Result<Document, String> {
        let report = analyze(
            loaded,
            &AnalyzeOptions {
                reference: self.reference.clone(),
                embedder: self.embedder.as_ref(),
                confidence: self.confidence,
                judge: None,
            },
        );
        Ok(Document::new(
            loaded.run.clone(),
            report,
            Some(self.source.clone()),
        ))
    }

    /// Analyses the run at `i` (asking `judge` when given) and opens it.
    fn open(&self, i: usize, judge: Option<&dyn Judge>) -> Result<Document, String> {
        let loaded = self.loaded(i)?;
        let report = analyze(
            loaded,
            &AnalyzeOptions {
                reference: self.reference.clone(),
                embedder: self.embedder.as_ref(),
                confidence: self.confidence,
                judge,
            },
        );
        self.with_report(i, report)
    }

    /// Opens the run at `i` with a report already made.
    fn with_report(&self, i: usize, report: Report) -> Result<Document, String> {
        let loaded = self.loaded(i)?;
        Ok(Document::new(
            loaded.run.clone(),
            report,
            Some(self.source.clone()),
        ))
    }
}

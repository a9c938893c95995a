//! Building a session's parts from the resolved settings: the consent check for every command it
//! will run (docs/experiments.md, "Where the command comes from"), the shell runner, the flip
//! judge with the session's embedder, the evaluator epoch, the batch's cohort name, and the sample
//! sink — the one place the attribution ledger is plugged in ([`ledger_location`],
//! [`open_ledger`], `run_ledger`).
//!
//! Commands come only from `Settings` (command line or config), never from a run file. Opening
//! the ledger reads and may create a file; nothing here prints.

use crate::analysis::influence::Embedder;
use crate::analysis::model::{Run, inert_line};
use crate::config::{Settings, UserCommand};
use crate::experiments::flip::{FlipJudge, FlipRule};
use crate::experiments::ledger::{self, Location, Policy};
use crate::experiments::run_ledger::RunLedger;
use crate::experiments::runner::shell::ShellRunner;
use crate::experiments::verdict::resolve_samples;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The most samples per probe a session takes. Each sample is one run of the user's agent, so
/// more is never a real budget; a larger `--samples` (it resolves up to `u32::MAX`) is refused
/// instead of reserving room for every sample's result up front, which aborted the process.
pub const MAX_SAMPLES: usize = 10_000;

/// Why a session cannot start (the command line exits 2 with this message).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(pub String);

/// Everything a session needs besides its plan and sink.
pub struct Prepared {
    /// The user's runner.
    pub runner: Arc<ShellRunner>,
    /// The session's embedder (also used for the influence ranking of `localize`).
    pub embedder: Arc<dyn Embedder>,
    /// The flip rule with the embedder.
    pub judge: Arc<FlipJudge>,
    /// The comparator as the ledger names it, e.g. `similarity<0.8@hashed`.
    pub comparator: String,
    /// The flip rule for people (a `cmd:` rule shows its command).
    pub rule_label: String,
    /// `<comparator>|tdn-tui/<version>`.
    pub evaluator_epoch: String,
    /// Samples per probe, resolved.
    pub samples: usize,
    /// Most samples at once.
    pub parallel: usize,
}

/// Refuses a command from a `tdn.toml` in the current folder unless `--yes` was given.
pub fn check_consent(label: &str, cmd: &UserCommand, yes: bool) -> Result<(), SetupError> {
    if cmd.needs_consent() && !yes {
        return Err(SetupError(format!(
            "the {label} command '{}' comes from '{}' in the current folder, which anyone who wrote this folder could have put there; run it with --yes, or give the command on the command line",
            inert_line(&cmd.text),
            cmd.origin_text()
        )));
    }
    Ok(())
}

/// The runner, judge and counts from the settings, after the consent checks.
pub fn prepare(settings: &Settings) -> Result<Prepared, SetupError> {
    let runner_cmd = settings.runner.as_ref().ok_or_else(|| {
        SetupError(
            "no runner: give the command that re-runs your agent with --runner 'CMD', or set [runner] command in tdn.toml (see docs/experiments.md)"
                .to_owned(),
        )
    })?;
    check_consent("runner", runner_cmd, settings.yes)?;
    if let Ok(FlipRule::Command(c)) = &settings.experiments.flip {
        check_consent("flip rule", c, settings.yes)?;
    }
    if let Some(c) = settings.embedder.command() {
        check_consent("embedder", c, settings.yes)?;
    }
    let t = settings.runner_timeout_s;
    if !(t.is_finite() && t > 0.0 && t <= f64::from(u32::MAX)) {
        return Err(SetupError(format!(
            "--timeout '{t}' must be a positive number of seconds, at most {}",
            u32::MAX
        )));
    }
    let samples = resolve_samples(Some(settings.experiments.samples));
    if samples > MAX_SAMPLES {
        return Err(SetupError(format!(
            "--samples '{}' asks for more than {MAX_SAMPLES} runs of your agent per probe; give at most {MAX_SAMPLES} (--samples N or [experiments] samples)",
            settings.experiments.samples
        )));
    }
    let timeout = Duration::from_secs_f64(t);
    let rule = settings
        .experiments
        .flip
        .clone()
        .map_err(|e| SetupError(e.why))?;
    let embedder: Arc<dyn Embedder> =
        Arc::from(crate::experiments::embedder::from_settings(settings));
    let comparator = rule.describe(&settings.embedder);
    let rule_label = rule.label(settings.embedder.name());
    Ok(Prepared {
        rule_label,
        runner: Arc::new(ShellRunner::new(runner_cmd.text.clone(), timeout)),
        judge: Arc::new(FlipJudge::new(rule, Arc::clone(&embedder), timeout)),
        embedder,
        // The same name `ledger plan` and `ledger select` read from the settings.
        evaluator_epoch: ledger::evaluator_epoch(settings),
        comparator,
        samples,
        parallel: settings.runner_parallel.max(1),
    })
}

/// The judge of `localize`'s analysis (report.md, runner.md "The judge"): `TDN_JUDGE` or
/// `[judge] command`, under the same consent rule as the runner (a command from a `tdn.toml` in
/// the current folder needs `--yes`); `None` when none is configured.
pub fn judge(
    settings: &Settings,
) -> Result<Option<crate::experiments::command_judge::CommandJudge>, SetupError> {
    let Some(cmd) = settings.judge.as_ref() else {
        return Ok(None);
    };
    check_consent("judge", cmd, settings.yes)?;
    Ok(Some(crate::experiments::command_judge::CommandJudge::new(
        cmd.text.clone(),
        settings.judge_timeout_s,
    )))
}

/// Where the samples of `run_id`, read from `run_path` (a file holding `runs_in_file` runs), are
/// kept (attribution-ledger.md §7): `--ledger PATH` or `[ledger] path` (a scenario ledger), else
/// beside the run file (a run ledger when the file holds one run, else a scenario ledger).
pub fn ledger_location(
    settings: &Settings,
    run_path: &Path,
    runs_in_file: usize,
    run_id: &str,
) -> Location {
    ledger::locate(
        run_path,
        settings.ledger.path.as_deref(),
        runs_in_file,
        run_id,
    )
}

/// The classification policy in force (`[ledger] neutral_effect`, `high_token_cost`).
pub fn ledger_policy(settings: &Settings) -> Policy {
    Policy {
        neutral_effect: settings.ledger.neutral_effect,
        high_token_cost: settings.ledger.high_token_cost,
    }
}

/// A new batch name (`b-` + UTC start + 8 random hex): one per `experiment` or `localize`
/// command, or per sweep started from the screen.
pub fn new_cohort() -> Result<String, SetupError> {
    ledger::new_cohort(time::OffsetDateTime::now_utc())
        .map_err(|e| SetupError(format!("cannot name the batch of samples: {e}")))
}

/// Opens (creating when absent) the ledger at `location` for the samples of `run`. Refuses, with
/// what to do, a file that is not a ledger, a run ledger of another run, or a place that cannot
/// be written: better said before the runner is called than after every sample.
pub fn open_ledger(
    location: &Location,
    run: &Run,
    policy: Policy,
) -> Result<Arc<RunLedger>, SetupError> {
    RunLedger::open(location, run, policy)
        .map(Arc::new)
        .map_err(|e| {
            SetupError(format!(
                "{e}; choose another file with --ledger PATH (or [ledger] path in tdn.toml)"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CommandOrigin, ConfigOrigin};
    use std::path::PathBuf;

    fn from(origin: ConfigOrigin) -> UserCommand {
        UserCommand {
            text: "python3 agent.py".to_owned(),
            origin: CommandOrigin::ConfigFile {
                path: PathBuf::from("tdn.toml"),
                origin,
            },
        }
    }

    #[test]
    fn a_command_from_the_current_folder_needs_yes() {
        let e = check_consent("runner", &from(ConfigOrigin::CurrentDir), false).unwrap_err();
        assert!(
            e.0.contains("'python3 agent.py'") && e.0.contains("--yes") && e.0.contains("tdn.toml"),
            "{e}"
        );
        assert!(check_consent("runner", &from(ConfigOrigin::CurrentDir), true).is_ok());
        assert!(check_consent("runner", &from(ConfigOrigin::UserDir), false).is_ok());
        assert!(check_consent("runner", &from(ConfigOrigin::Argument), false).is_ok());
    }

    fn refused(s: &Settings) -> String {
        match prepare(s) {
            Ok(_) => panic!("prepared"),
            Err(e) => e.0,
        }
    }

    #[test]
    fn no_runner_and_bad_settings_are_refused() {
        let s = Settings::default();
        assert!(refused(&s).contains("--runner"));
        let mut s = Settings {
            runner: Some(UserCommand {
                text: "true".to_owned(),
                origin: CommandOrigin::CommandLine,
            }),
            ..Settings::default()
        };
        s.runner_timeout_s = -1.0;
        assert!(refused(&s).contains("--timeout"));
        s.runner_timeout_s = 1e300;
        assert!(refused(&s).contains("at most 4294967295"), "not 'positive'");
        s.runner_timeout_s = 5.0;
        s.experiments.samples = 1e12;
        let e = refused(&s);
        assert!(e.contains("--samples") && e.contains("10000"), "{e}");
        s.experiments.samples = MAX_SAMPLES as f64;
        s.experiments.flip = Ok(FlipRule::Exact);
        assert!(prepare(&s).is_ok(), "the largest allowed count");
        s.experiments.samples = 3.0;
        s.experiments.flip = crate::config::parse_flip("maybe", 0.8, |_| unreachable!());
        assert!(refused(&s).contains("'maybe'"));
        s.experiments.flip = Ok(FlipRule::Exact);
        let Ok(p) = prepare(&s) else {
            panic!("refused")
        };
        assert_eq!(p.samples, 3);
        assert!(p.evaluator_epoch.starts_with("exact|tdn-tui/"));
    }
}

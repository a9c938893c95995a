//! Names the ledger writes (attribution-ledger.md §4, §7): timestamps, sample ids, cohort names,
//! the evaluator epoch string, `created_by`, and where a run's ledger lives. Reads the settings it
//! is given and the OS random source; writes nothing.

use super::record::Scope;
use crate::config::Settings;
use std::path::{Path, PathBuf};
use time::OffsetDateTime;
use time::macros::format_description;

/// The file-name suffix of a ledger.
pub const LEDGER_SUFFIX: &str = ".ledger.jsonl";
/// Random bytes in a sample id (32 hex digits).
pub const SAMPLE_ID_BYTES: usize = 16;
/// Random bytes at the end of a cohort name (8 hex digits).
pub const COHORT_RANDOM_BYTES: usize = 4;

/// `tdn-tui/<version>`.
pub fn created_by() -> String {
    format!("tdn-tui/{}", env!("CARGO_PKG_VERSION"))
}

/// `YYYY-MM-DDTHH:MM:SSZ` in UTC, whole seconds.
pub fn timestamp(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    let fmt = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    t.format(&fmt)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_owned())
}

/// True for exactly `YYYY-MM-DDTHH:MM:SSZ` naming a real instant.
pub fn is_timestamp(s: &str) -> bool {
    let fmt = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    s.len() == 20 && time::PrimitiveDateTime::parse(s, &fmt).is_ok()
}

/// Why random bytes could not be had.
#[derive(Debug, thiserror::Error)]
#[error("the system's random source failed: {0}")]
pub struct RandomError(String);

fn random_hex(n: usize) -> Result<String, RandomError> {
    let mut buf = vec![0u8; n];
    getrandom::fill(&mut buf).map_err(|e| RandomError(e.to_string()))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// A new sample id: 32 random hex digits.
pub fn new_sample_id() -> Result<String, RandomError> {
    random_hex(SAMPLE_ID_BYTES)
}

/// A new cohort name for a batch started at `start`: `b-YYYYMMDDTHHMMSSZ-xxxxxxxx`.
pub fn new_cohort(start: OffsetDateTime) -> Result<String, RandomError> {
    let t = start.to_offset(time::UtcOffset::UTC);
    let fmt = format_description!("[year][month][day]T[hour][minute][second]Z");
    let when = t
        .format(&fmt)
        .unwrap_or_else(|_| "19700101T000000Z".to_owned());
    Ok(format!("b-{when}-{}", random_hex(COHORT_RANDOM_BYTES)?))
}

/// The evaluator epoch of §4: `<comparator>|tdn-tui/<version>`, e.g.
/// `similarity<0.8@hashed|tdn-tui/0.1.0`. Command comparators and embedders appear as `cmd:` +
/// the SHA-256 of their command text, never the text itself.
pub fn evaluator_epoch(s: &Settings) -> String {
    // The runner names the comparator; reading the same name keeps plan and select on the epoch
    // the samples were written under. A rule that does not parse runs no experiment; it is
    // named as written.
    let comparator = match &s.experiments.flip {
        Ok(rule) => rule.describe(&s.embedder),
        Err(e) => e.written.clone(),
    };
    format!("{comparator}|{}", created_by())
}

/// The default ledger path beside a run file: a trailing `.json` replaced by `.ledger.jsonl`,
/// else `.ledger.jsonl` appended.
pub fn default_path(run_path: &Path) -> PathBuf {
    let name = run_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let new_name = match name.strip_suffix(".json") {
        Some(stem) => format!("{stem}{LEDGER_SUFFIX}"),
        None => format!("{name}{LEDGER_SUFFIX}"),
    };
    run_path.with_file_name(new_name)
}

/// Where a run's evidence goes and how the ledger is named if it must be created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The ledger file.
    pub path: PathBuf,
    /// Run or scenario.
    pub scope: Scope,
    /// The run id, or the file name without `.ledger.jsonl`.
    pub name: String,
}

/// §7's location rule. `configured` is `--ledger PATH` or `[ledger] path`; `runs_in_file` is how
/// many runs the run file holds.
pub fn locate(
    run_path: &Path,
    configured: Option<&Path>,
    runs_in_file: usize,
    run_id: &str,
) -> Location {
    match configured {
        Some(p) => Location {
            path: p.to_path_buf(),
            scope: Scope::Scenario,
            name: scenario_name(p),
        },
        None => {
            let path = default_path(run_path);
            if runs_in_file == 1 {
                Location {
                    path,
                    scope: Scope::Run,
                    name: run_id.to_owned(),
                }
            } else {
                let name = scenario_name(&path);
                Location {
                    path,
                    scope: Scope::Scenario,
                    name,
                }
            }
        }
    }
}

fn scenario_name(p: &Path) -> String {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.strip_suffix(LEDGER_SUFFIX)
        .map(str::to_owned)
        .unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CommandOrigin, UserCommand};

    #[test]
    fn the_default_path_replaces_a_trailing_json() {
        assert_eq!(
            default_path(Path::new("runs/cal-0007.json")),
            Path::new("runs/cal-0007.ledger.jsonl")
        );
        assert_eq!(
            default_path(Path::new("runs/trace.otlp")),
            Path::new("runs/trace.otlp.ledger.jsonl")
        );
    }

    #[test]
    fn location_scope_follows_the_rule() {
        let one = locate(Path::new("a/r.json"), None, 1, "cal-7");
        assert_eq!((one.scope, one.name.as_str()), (Scope::Run, "cal-7"));
        let many = locate(Path::new("a/r.json"), None, 3, "cal-7");
        assert_eq!((many.scope, many.name.as_str()), (Scope::Scenario, "r"));
        let given = locate(
            Path::new("a/r.json"),
            Some(Path::new("x/team.ledger.jsonl")),
            1,
            "c",
        );
        assert_eq!(
            (given.scope, given.name.as_str()),
            (Scope::Scenario, "team")
        );
    }

    #[test]
    fn timestamps_are_utc_whole_seconds() {
        let t = time::macros::datetime!(2026-08-17 12:00:00.75 +02:00);
        assert_eq!(timestamp(t), "2026-08-17T10:00:00Z");
        assert!(is_timestamp("2026-08-17T10:00:00Z"));
        assert!(!is_timestamp("2026-13-17T10:00:00Z"));
        assert!(!is_timestamp("2026-08-17T10:00:00.5Z"));
        assert!(!is_timestamp("2026-08-17 10:00:00Z"));
    }

    #[test]
    fn cohort_and_sample_ids_have_the_spec_shape() {
        let c = new_cohort(time::macros::datetime!(2026-08-17 10:00:00 UTC)).unwrap();
        assert!(c.starts_with("b-20260817T100000Z-"), "{c}");
        assert_eq!(c.len(), "b-20260817T100000Z-".len() + 8);
        let id = new_sample_id().unwrap();
        assert!(super::super::digest::is_lower_hex(&id, 32));
    }

    #[test]
    fn epochs_name_the_comparator_and_hash_commands() {
        let mut s = Settings::default();
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(
            evaluator_epoch(&s),
            format!("similarity<0.8@hashed|tdn-tui/{v}")
        );
        s.experiments.flip = Ok(crate::config::FlipRule::Contains("APPROVED".to_owned()));
        assert_eq!(
            evaluator_epoch(&s),
            format!("contains:APPROVED|tdn-tui/{v}")
        );
        s.experiments.flip = Ok(crate::config::FlipRule::Command(UserCommand {
            text: "judge.sh".to_owned(),
            origin: CommandOrigin::CommandLine,
        }));
        let e = evaluator_epoch(&s);
        assert_eq!(
            e,
            format!(
                "cmd:{}|tdn-tui/{v}",
                super::super::digest::sha256_hex(b"judge.sh")
            )
        );
        assert!(!e.contains("judge.sh"));
    }
}

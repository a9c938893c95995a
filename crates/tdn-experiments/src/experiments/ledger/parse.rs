//! Reading one ledger line (already strict JSON) into a typed [`Record`]: `schema`, `type`,
//! `prev`, each member's type and range (attribution-ledger.md §4-§7). Schema-1 lines pass
//! through `migrate.rs` first. Cross-record checks belong to `verify`. No I/O.

use super::bundle::Entry;
use super::canonical::exact_u64;
use super::digest::{digest, is_lower_hex, is_sha256_hex};
use super::migrate::migrate;
use super::naming::is_timestamp;
use super::record::{
    Attribution, BundleRecord, CancelRecord, Cost, Disposition, EvidenceLevel, Header, Outcome,
    Policy, Record, RecordType, SCHEMA, Sample, Scope, Spent, Torn, Trial, TrialExperiment,
};
use crate::analysis::model::inert_line;
use crate::experiments::spec::ExperimentKind;
use serde_json::{Map, Value};

/// One line read into a record.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// 1 or 2.
    pub schema: u64,
    /// The stored `prev` (schema 2).
    pub prev: Option<String>,
    /// The record.
    pub record: Record,
    /// Bindings a schema-1 attribution lacks (non-empty → `legacy_unverified`).
    pub missing: Vec<&'static str>,
}

/// A line that is a JSON object but not a valid record.
#[derive(Clone, Debug, PartialEq)]
pub struct Invalid {
    /// Its `type`, when it names one.
    pub kind: Option<String>,
    /// What is wrong.
    pub reason: String,
}

/// Reads `v` (the whole line) into a record.
pub fn parse_record(v: &Value) -> Result<Parsed, Invalid> {
    let raw_type = v.get("type").and_then(Value::as_str).map(str::to_owned);
    let invalid = |reason: String| Invalid {
        kind: raw_type.clone(),
        reason,
    };
    let Value::Object(obj) = v else {
        return Err(invalid("the line is not a JSON object".to_owned()));
    };
    let schema = match obj.get("schema") {
        None => 1,
        Some(s) => match s.as_u64() {
            Some(n @ (1 | 2)) => n,
            Some(n) if n > SCHEMA => {
                return Err(invalid(format!(
                    "schema {n} is newer than this tdn-tui reads (up to {SCHEMA}); it cannot be vouched for"
                )));
            }
            _ => return Err(invalid("'schema' must be 1 or 2".to_owned())),
        },
    };
    let (owned, missing);
    let obj = if schema == 1 {
        let m = migrate(obj);
        missing = m.missing;
        owned = m.value;
        &owned
    } else {
        missing = Vec::new();
        obj
    };
    let f = Fields(obj);
    let prev = if schema == 2 {
        match obj.get("prev") {
            Some(Value::Null) => None,
            Some(Value::String(p)) if is_sha256_hex(p) => Some(p.clone()),
            _ => {
                return Err(invalid(
                    "'prev' must be null or a SHA-256 hex digest".to_owned(),
                ));
            }
        }
    } else {
        None
    };
    let type_text = f.str("type").map_err(invalid)?;
    let kind = RecordType::parse(&type_text)
        .ok_or_else(|| invalid(format!("unknown record type '{}'", inert_line(&type_text))))?;
    let record = match kind {
        RecordType::Ledger => Record::Header(header(&f, schema).map_err(invalid)?),
        RecordType::Bundle => Record::Bundle(bundle(&f).map_err(invalid)?),
        RecordType::Sample => Record::Sample(Box::new(sample(&f).map_err(invalid)?)),
        RecordType::Trial => Record::Trial(Box::new(trial(&f, v).map_err(invalid)?)),
        RecordType::Attribution => Record::Attribution(Box::new(attribution(&f).map_err(invalid)?)),
        RecordType::Cancel => Record::Cancel(CancelRecord {
            cohort: f.str("cohort").map_err(invalid)?,
            reason: f.str("reason").map_err(invalid)?,
            trial_ids: f.strings("trial_ids").map_err(invalid)?,
            cancelled_at: f.timestamp("cancelled_at").map_err(invalid)?,
        }),
        RecordType::Torn => Record::Torn(Torn {
            line: f.u64("line").map_err(invalid)?,
            bytes: f.u64("bytes").map_err(invalid)?,
        }),
    };
    Ok(Parsed {
        schema,
        prev,
        record,
        missing,
    })
}

struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    fn get(&self, k: &str) -> Option<&Value> {
        self.0.get(k)
    }

    fn str(&self, k: &str) -> Result<String, String> {
        match self.get(k) {
            Some(Value::String(s)) => Ok(s.clone()),
            _ => Err(format!("'{k}' must be a string")),
        }
    }

    fn opt_str(&self, k: &str) -> Result<Option<String>, String> {
        match self.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            _ => Err(format!("'{k}' must be a string or null")),
        }
    }

    fn hex64(&self, k: &str) -> Result<String, String> {
        let s = self.str(k)?;
        if is_sha256_hex(&s) {
            Ok(s)
        } else {
            Err(format!(
                "'{k}' must be a SHA-256 hex digest (64 lowercase hex digits)"
            ))
        }
    }

    fn timestamp(&self, k: &str) -> Result<String, String> {
        let s = self.str(k)?;
        if is_timestamp(&s) {
            Ok(s)
        } else {
            Err(format!(
                "'{k}' must be a UTC time written YYYY-MM-DDTHH:MM:SSZ, not '{}'",
                inert_line(&s)
            ))
        }
    }

    fn u64(&self, k: &str) -> Result<u64, String> {
        let v = self.get(k);
        v.and_then(Value::as_u64)
            .or_else(|| v?.as_f64().and_then(exact_u64))
            .ok_or_else(|| format!("'{k}' must be a non-negative integer"))
    }

    fn f64(&self, k: &str) -> Result<f64, String> {
        self.get(k)
            .and_then(Value::as_f64)
            .filter(|f| f.is_finite())
            .ok_or_else(|| format!("'{k}' must be a number"))
    }

    fn bool(&self, k: &str) -> Result<bool, String> {
        self.get(k)
            .and_then(Value::as_bool)
            .ok_or_else(|| format!("'{k}' must be true or false"))
    }

    fn strings(&self, k: &str) -> Result<Vec<String>, String> {
        let err = || format!("'{k}' must be an array of strings");
        let Some(Value::Array(items)) = self.get(k) else {
            return Err(err());
        };
        items
            .iter()
            .map(|i| i.as_str().map(str::to_owned).ok_or_else(err))
            .collect()
    }

    fn level(&self, k: &str) -> Result<EvidenceLevel, String> {
        let s = self.str(k)?;
        EvidenceLevel::parse(&s).ok_or_else(|| {
            format!(
                "'{k}' must be causal_ablation, paired_shadow or component_correlated, not '{}'",
                inert_line(&s)
            )
        })
    }
}

fn header(f: &Fields<'_>, schema: u64) -> Result<Header, String> {
    let scope = f.str("scope")?;
    let scope = Scope::parse(&scope).ok_or_else(|| {
        format!(
            "'scope' must be run or scenario, not '{}'",
            inert_line(&scope)
        )
    })?;
    let created_at = if schema == 2 {
        f.timestamp("created_at")?
    } else {
        f.str("created_at")?
    };
    Ok(Header {
        scope,
        name: f.str("name")?,
        created_at,
        created_by: f.str("created_by")?,
    })
}

fn bundle(f: &Fields<'_>) -> Result<BundleRecord, String> {
    let digest = f.hex64("digest")?;
    let Some(Value::Array(units)) = f.get("units") else {
        return Err("'units' must be an array".to_owned());
    };
    let mut out = Vec::with_capacity(units.len());
    for (i, u) in units.iter().enumerate() {
        let Value::Object(m) = u else {
            return Err(format!("units[{i}] must be an object"));
        };
        let uf = Fields(m);
        let at = |e: String| format!("units[{i}]: {e}");
        out.push((
            Entry {
                kind: uf.str("kind").map_err(at)?,
                id: uf.str("id").map_err(at)?,
                text_sha256: uf.hex64("text_sha256").map_err(at)?,
            },
            uf.hex64("digest").map_err(at)?,
        ));
    }
    Ok(BundleRecord { digest, units: out })
}

fn sample(f: &Fields<'_>) -> Result<Sample, String> {
    let sample_id = f.str("sample_id")?;
    if !is_lower_hex(&sample_id, 32) {
        return Err("'sample_id' must be 32 lowercase hex digits".to_owned());
    }
    let run_status = f.str("run_status")?;
    if crate::analysis::model::RunStatus::parse(&run_status).is_none() {
        return Err(format!(
            "'run_status' must be failed, succeeded, error or unfinished, not '{}'",
            inert_line(&run_status)
        ));
    }
    let experiment = experiment_kind(&f.str("experiment")?)?;
    let outcome = match f.get("outcome") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => {
            let of = Fields(m);
            let score = match m.get("score") {
                None | Some(Value::Null) => None,
                Some(_) => Some(of.f64("score").map_err(|e| format!("outcome: {e}"))?),
            };
            Some(Outcome {
                output_sha256: of
                    .hex64("output_sha256")
                    .map_err(|e| format!("outcome: {e}"))?,
                reproduced: of.bool("reproduced").map_err(|e| format!("outcome: {e}"))?,
                score,
            })
        }
        Some(_) => return Err("'outcome' must be an object".to_owned()),
    };
    let error = f.opt_str("error")?;
    match (&outcome, &error) {
        (Some(_), Some(_)) => {
            return Err("a sample holds 'outcome' or 'error', not both".to_owned());
        }
        (None, None) => return Err("a sample must hold 'outcome' or 'error'".to_owned()),
        (None, Some(e)) if e.contains(['\n', '\r']) => {
            return Err("'error' must be one line".to_owned());
        }
        _ => {}
    }
    let cost = match f.get("cost") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => {
            let num = |k: &str| -> Result<Option<f64>, String> {
                match m.get(k) {
                    None => Ok(None),
                    Some(v) => v
                        .as_f64()
                        .filter(|x| *x >= 0.0)
                        .map(Some)
                        .ok_or_else(|| format!("cost.{k} must be a non-negative number")),
                }
            };
            Some(Cost {
                loops: num("loops")?,
                tokens: num("tokens")?,
                usd: num("usd")?,
            })
        }
        Some(_) => return Err("'cost' must be an object or null".to_owned()),
    };
    let duration_ms = match f.get("duration_ms") {
        None | Some(Value::Null) => None,
        Some(_) => Some(f.u64("duration_ms")?),
    };
    Ok(Sample {
        sample_id,
        cohort: f.str("cohort")?,
        evaluator_epoch: f.str("evaluator_epoch")?,
        run_id: f.str("run_id")?,
        run_status,
        runner_sha256: f.hex64("runner_sha256")?,
        experiment,
        remove: f.strings("remove")?,
        restore: f.strings("restore")?,
        from_step: f.opt_str("from_step")?,
        patch: f.opt_str("patch")?,
        seed: f.u64("seed")?,
        sample: f.u64("sample")?,
        baseline_bundle: f.hex64("baseline_bundle")?,
        finished_at: f.timestamp("finished_at")?,
        outcome,
        error,
        cost,
        duration_ms,
    })
}

fn experiment_kind(s: &str) -> Result<ExperimentKind, String> {
    ExperimentKind::parse(s).ok_or_else(|| {
        format!(
            "'experiment' must be baseline, ablate, restore or replay, not '{}'",
            inert_line(s)
        )
    })
}

fn trial(f: &Fields<'_>, raw: &Value) -> Result<Trial, String> {
    Ok(Trial {
        trial_id: f.str("trial_id")?,
        component_kind: f.str("component_kind")?,
        component_id: f.str("component_id")?,
        component_digest: f.str("component_digest")?,
        tested_bundle: f.str("tested_bundle")?,
        comparison_bundle: f.str("comparison_bundle")?,
        baseline_bundle: f.str("baseline_bundle")?,
        evidence_level: f.level("evidence_level")?,
        evaluator_epoch: f.str("evaluator_epoch")?,
        cohort: f.str("cohort")?,
        run_id: f.str("run_id")?,
        runner_sha256: f.str("runner_sha256")?,
        seed: f.u64("seed")?,
        experiment: TrialExperiment::read(&f.str("experiment")?),
        with_sample: f.opt_str("with_sample")?,
        without_sample: f.opt_str("without_sample")?,
        with_score: f.f64("with_score")?,
        without_score: f.f64("without_score")?,
        token_cost: f.u64("token_cost")?,
        tested_at: f.str("tested_at")?,
        interactions: f.strings("interactions")?,
        with_spent: spent(f, "with_spent")?,
        without_spent: spent(f, "without_spent")?,
        source_digest: digest(raw).map_err(|e| e.to_string())?,
    })
}

/// A trial's `with_spent` or `without_spent`: absent in trials written before it was recorded.
fn spent(f: &Fields<'_>, k: &str) -> Result<Option<Spent>, String> {
    let m = match f.get(k) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(format!("'{k}' must be an object")),
    };
    let of = Fields(m);
    let num = |n: &str| -> Result<Option<f64>, String> {
        match m.get(n) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|x| *x >= 0.0)
                .map(Some)
                .ok_or_else(|| format!("{k}.{n} must be a non-negative number")),
        }
    };
    let duration_ms = match m.get("duration_ms") {
        None => None,
        Some(_) => Some(of.u64("duration_ms").map_err(|e| format!("{k}: {e}"))?),
    };
    Ok(Some(Spent {
        duration_ms,
        cost: Cost {
            loops: num("loops")?,
            tokens: num("tokens")?,
            usd: num("usd")?,
        },
    }))
}

/// Reads a trial from the fields of a parity fixture or any object, computing its source digest
/// from the object as given.
pub fn trial_from_value(v: &Value) -> Result<Trial, String> {
    match v {
        Value::Object(m) => trial(&Fields(m), v),
        _ => Err("a trial must be a JSON object".to_owned()),
    }
}

fn attribution(f: &Fields<'_>) -> Result<Attribution, String> {
    let disposition = f.str("disposition")?;
    let disposition = Disposition::parse(&disposition).ok_or_else(|| {
        format!(
            "'disposition' must be harmful, retained, demotion_candidate or uncertain, not '{}'",
            inert_line(&disposition)
        )
    })?;
    Ok(Attribution {
        attribution_id: f.str("attribution_id")?,
        component_kind: f.str("component_kind")?,
        component_id: f.str("component_id")?,
        component_digest: f.str("component_digest")?,
        tested_bundle: f.str("tested_bundle")?,
        evidence_level: f.level("evidence_level")?,
        comparison_bundle: f.str("comparison_bundle")?,
        cohort: f.str("cohort")?,
        baseline_bundle: f.str("baseline_bundle")?,
        evaluator_epoch: f.str("evaluator_epoch")?,
        effect: f.f64("effect")?,
        confidence: f.f64("confidence")?,
        token_cost: f.u64("token_cost")?,
        tested_at: f.str("tested_at")?,
        interactions: f.strings("interactions")?,
        trial_ids: f.strings("trial_ids")?,
        matched_pair_keys: f.strings("matched_pair_keys")?,
        source_trial_digests: f.strings("source_trial_digests")?,
        policy: Policy {
            neutral_effect: f.f64("neutral_effect")?,
            high_token_cost: f.u64("high_token_cost")?,
        },
        disposition,
        supersedes: f.opt_str("supersedes")?,
    })
}

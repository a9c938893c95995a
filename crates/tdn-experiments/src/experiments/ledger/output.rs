//! What `ledger show|verify|plan|select` print (attribution-ledger.md §6-§9), as text and as JSON
//! values: built here as strings so the command line stays thin and the screen can reuse the
//! one-line record summaries. Every effect printed names its evidence level; every string from
//! the file goes through `inert_line`. Never prints.

use super::canonical::exact_u64;
use super::parse::Parsed;
use super::plan::{Plan, PlanInputs, PlanPolicy, Planned};
use super::record::{Record, Sample};
use super::select::{Selected, Selection};
use super::verify::{Checked, Problem, Severity, Status};
use crate::analysis::js_number::js_number;
use crate::analysis::model::inert_line;
use serde_json::{Value, json};

/// A number for JSON output: an integer when it is one (so `5`, not `5.0`).
pub fn num(x: f64) -> Value {
    match exact_u64(x.abs()) {
        Some(n) if x >= 0.0 => json!(n),
        Some(n) => json!(-i64::try_from(n).unwrap_or(i64::MAX)),
        None => json!(x),
    }
}

fn short(s: &str) -> String {
    inert_line(s).chars().take(8).collect()
}

fn units(s: &Sample) -> String {
    let list = |v: &[String]| {
        v.iter()
            .map(|u| inert_line(u).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (named, other_label, other) = match s.experiment.as_str() {
        "ablate" => (Some(&s.remove), "restore", &s.restore),
        "restore" => (Some(&s.restore), "remove", &s.remove),
        _ => (None, "", &s.remove),
    };
    let mut out = match (s.experiment.as_str(), named) {
        ("replay", _) => format!(
            " from '{}'{}",
            inert_line(s.from_step.as_deref().unwrap_or("?")),
            if s.patch.is_some() { " (patched)" } else { "" }
        ),
        (_, Some(v)) => format!(" [{}]", list(v)),
        _ => String::new(),
    };
    if named.is_some() {
        if !other.is_empty() {
            out.push_str(&format!(" {other_label} [{}]", list(other)));
        }
    } else {
        if !s.remove.is_empty() {
            out.push_str(&format!(" remove [{}]", list(&s.remove)));
        }
        if !s.restore.is_empty() {
            out.push_str(&format!(" restore [{}]", list(&s.restore)));
        }
    }
    out
}

/// One line describing a record (no line number, no id).
pub fn summary(p: &Parsed) -> String {
    match &p.record {
        Record::Header(h) => format!(
            "{} ledger '{}', created {} by {}",
            h.scope.as_str(),
            inert_line(&h.name),
            inert_line(&h.created_at),
            inert_line(&h.created_by)
        ),
        Record::Bundle(b) => format!("{} units", b.units.len()),
        Record::Sample(s) => {
            let outcome = match (&s.outcome, &s.error) {
                (Some(o), _) => {
                    let what = if o.reproduced {
                        "reproduced the recorded outcome"
                    } else {
                        "departed from the recorded outcome"
                    };
                    match o.score {
                        Some(x) => format!("{what} (score {})", js_number(x)),
                        None => format!("{what} (no score)"),
                    }
                }
                (None, Some(e)) => format!("error: {}", inert_line(e)),
                (None, None) => "no outcome".to_owned(),
            };
            format!(
                "{}{} seed {}: {outcome}",
                s.experiment.as_str(),
                units(s),
                s.seed
            )
        }
        Record::Trial(t) => format!(
            "{}/{} {} effect {} (seed {}, {})",
            inert_line(&t.component_kind),
            inert_line(&t.component_id),
            t.evidence_level.as_str(),
            js_number(super::attribute::trial_effect(t)),
            t.seed,
            inert_line(t.experiment.as_str())
        ),
        Record::Attribution(a) => format!(
            "{}/{} {} effect {} confidence {} {}{}",
            inert_line(&a.component_kind),
            inert_line(&a.component_id),
            a.evidence_level.as_str(),
            js_number(a.effect),
            js_number(a.confidence),
            a.disposition.as_str(),
            match &a.supersedes {
                Some(s) => format!(", supersedes {}", short(s)),
                None => String::new(),
            }
        ),
        Record::Torn(t) => format!("seals torn line {} ({} bytes)", t.line, t.bytes),
        Record::Cancel(c) => format!(
            "batch '{}' cancelled ({}): its {} trial(s) conclude nothing; no attribution",
            inert_line(&c.cohort),
            inert_line(&c.reason),
            c.trial_ids.len()
        ),
    }
}

/// `ledger show` as text: one line per line of the file.
pub fn show_text(c: &Checked) -> String {
    let mut out = String::new();
    for (line, status) in c.file.lines.iter().zip(&c.status) {
        let (kind, id, text) = match line.parsed() {
            Some(p) => (
                p.record.kind().as_str(),
                match &p.record {
                    Record::Header(_) | Record::Torn(_) => String::new(),
                    r => r.id().map(short).unwrap_or_default(),
                },
                summary(p),
            ),
            None => (
                "-",
                String::new(),
                format!("{} bytes, not a record", line.len),
            ),
        };
        let mark = match status {
            Status::Verified => "",
            Status::LegacyUnverified => "  [legacy_unverified: history, not a cause]",
            Status::Unbound => "  [unbound: cohort not aggregated]",
            Status::Cancelled => "  [cancelled batch: concludes nothing]",
            Status::Torn => "  [torn: ignored]",
            Status::Failed => "  [FAILED verification: see 'tdn-tui ledger verify']",
        };
        out.push_str(&format!(
            "{:>5} {kind:<11} {id:<8} {text}{mark}\n",
            line.number
        ));
    }
    out
}

/// `ledger show --json`.
pub fn show_json(c: &Checked) -> Value {
    let records: Vec<Value> = c
        .file
        .lines
        .iter()
        .zip(&c.status)
        .map(|(line, status)| {
            let p = line.parsed();
            json!({
                "line": line.number,
                "type": p.map(|p| p.record.kind().as_str()),
                "id": p.and_then(|p| match p.record {
                    Record::Header(_) | Record::Torn(_) => None,
                    ref r => r.id(),
                }),
                "verified": *status == Status::Verified,
                "status": status.as_str(),
                "record": line.value(),
            })
        })
        .collect();
    json!({"format": "tdn.ledger-show/1", "records": records})
}

fn problem_line(path: &str, p: &Problem) -> String {
    let kind = p.record_type.as_deref().unwrap_or("line");
    let id =
        p.id.as_deref()
            .map(|i| format!(" {}", short(i)))
            .unwrap_or_default();
    let warn = if p.severity == Severity::Warning {
        "warning: "
    } else {
        ""
    };
    format!(
        "{path}:{}: {}{id}: {warn}{}",
        p.line,
        inert_line(kind),
        p.message
    )
}

/// `ledger verify` as text: one line per problem, then the counts.
pub fn verify_text(c: &Checked, path: &str) -> String {
    let mut out = String::new();
    for p in &c.problems {
        out.push_str(&problem_line(path, p));
        out.push('\n');
    }
    let n = c.counts();
    out.push_str(&format!(
        "{} lines: {} verified, {} legacy_unverified, {} unbound trials, {} cancelled trials, {} torn, {} failed\n",
        n.lines, n.verified, n.legacy_unverified, n.unbound, n.cancelled, n.torn, n.failed
    ));
    out
}

/// `ledger verify --json`.
pub fn verify_json(c: &Checked) -> Value {
    let n = c.counts();
    let problems: Vec<Value> = c
        .problems
        .iter()
        .map(|p| {
            json!({"line": p.line, "type": p.record_type, "id": p.id, "code": p.code,
                   "message": p.message,
                   "severity": if p.severity == Severity::Failure { "failure" } else { "warning" }})
        })
        .collect();
    json!({
        "format": "tdn.ledger-verify/1",
        "ok": c.ok(),
        "counts": {"lines": n.lines, "verified": n.verified, "legacy_unverified": n.legacy_unverified,
                   "unbound": n.unbound, "cancelled": n.cancelled, "torn": n.torn,
                   "failed": n.failed},
        "problems": problems,
    })
}

fn planned_json(p: &Planned) -> Value {
    let c = &p.candidate;
    json!({
        "component_kind": c.component_kind, "component_id": c.component_id,
        "component_digest": c.component_digest, "priority": num(p.priority),
        "estimated_cost": c.estimated_cost, "experiment": c.experiment().as_str(),
        "terms": {"tokens": num(p.terms.tokens), "uncertainty": num(p.terms.uncertainty),
                  "age": num(p.terms.age), "interaction": num(p.terms.interaction),
                  "bundle_changed": num(p.terms.bundle_changed)},
    })
}

/// `ledger plan --json`.
pub fn plan_json(plan: &Plan, i: &PlanInputs, policy: &PlanPolicy, epoch: &str, k: u64) -> Value {
    json!({
        "format": "tdn.ledger-plan/1",
        "trigger": plan.trigger.as_str(),
        "budget": policy.budget,
        "spent": plan.spent,
        "inputs": {"current_generation": i.current_generation,
                   "last_reablation_generation": i.last_reablation_generation,
                   "plateau_length": i.plateau_length, "current_bundle": i.current_bundle,
                   "evaluator_epoch": epoch, "cadence": policy.cadence, "plateau": policy.plateau,
                   "samples": k},
        "selected": plan.selected.iter().map(planned_json).collect::<Vec<_>>(),
        "deferred": plan.deferred.iter().map(planned_json).collect::<Vec<_>>(),
    })
}

fn planned_text(p: &Planned) -> String {
    let c = &p.candidate;
    let t = &p.terms;
    format!(
        "  {}/{} {}  priority {} = tokens {} + uncertainty {} + age {} + interaction {} + bundle_changed {}; {} by {} runner calls\n",
        inert_line(&c.component_kind),
        inert_line(&c.component_id),
        short(&c.component_digest),
        js_number(p.priority),
        js_number(t.tokens),
        js_number(t.uncertainty),
        js_number(t.age),
        js_number(t.interaction),
        js_number(t.bundle_changed),
        c.experiment().as_str(),
        c.estimated_cost
    )
}

/// `ledger plan` as text.
pub fn plan_text(plan: &Plan, i: &PlanInputs, policy: &PlanPolicy, epoch: &str) -> String {
    let mut out = format!(
        "trigger: {} (generation {}, last re-ablation {}, cadence {}; plateau {} of {}; bundle {})\nepoch: {}\nbudget {} runner calls, spent {}\n",
        plan.trigger.as_str(),
        i.current_generation,
        i.last_reablation_generation,
        policy.cadence,
        i.plateau_length,
        policy.plateau,
        i.current_bundle
            .as_deref()
            .map(short)
            .unwrap_or_else(|| "unknown".to_owned()),
        inert_line(epoch),
        policy.budget,
        plan.spent
    );
    for (title, list) in [("selected", &plan.selected), ("deferred", &plan.deferred)] {
        out.push_str(&format!("{title}: {}\n", list.len()));
        for p in list.iter() {
            out.push_str(&planned_text(p));
        }
    }
    out
}

fn selected_json(s: &Selected) -> Value {
    json!({
        "component_kind": s.component_kind, "component_id": s.component_id,
        "component_digest": s.component_digest, "included": s.included,
        "disposition": s.disposition.as_str(),
        "evidence_level": s.evidence_level.map(|l| l.as_str()),
        "effect": s.effect.map(num), "confidence": s.confidence.map(num),
        "attribution_id": s.attribution_id, "token_cost": s.token_cost,
        "reason": s.reason.as_str(),
    })
}

/// `ledger select --json`.
pub fn select_json(s: &Selection) -> Value {
    json!({
        "format": "tdn.ledger-select/1",
        "bundle": s.bundle,
        "evaluator_epoch": s.evaluator_epoch,
        "components": s.components.iter().map(selected_json).collect::<Vec<_>>(),
        "restore": s.restore.iter().map(selected_json).collect::<Vec<_>>(),
        "other_epochs": s.other_epochs,
    })
}

fn selected_text(s: &Selected) -> String {
    let evidence = match (s.evidence_level, s.effect) {
        (Some(l), Some(e)) => format!(
            " ({} effect {} confidence {})",
            l.as_str(),
            js_number(e),
            s.confidence.map(js_number).unwrap_or_default()
        ),
        _ => String::new(),
    };
    format!(
        "  {:<7} {}/{}  {} [{}]{evidence}\n",
        if s.included { "include" } else { "OMIT" },
        inert_line(&s.component_kind),
        inert_line(&s.component_id),
        s.disposition.as_str(),
        s.reason.as_str()
    )
}

/// `ledger select` as text.
pub fn select_text(s: &Selection) -> String {
    let mut out = format!(
        "bundle {} ({} units), epoch {}\n",
        short(&s.bundle),
        s.components.len(),
        inert_line(&s.evaluator_epoch)
    );
    for c in &s.components {
        out.push_str(&selected_text(c));
    }
    if !s.restore.is_empty() {
        out.push_str("restore (putting them back moved the run off the failure):\n");
        for c in &s.restore {
            out.push_str(&selected_text(c));
        }
    }
    if !s.other_epochs.is_empty() {
        let list: Vec<String> = s
            .other_epochs
            .iter()
            .map(|e| format!("'{}'", inert_line(e)))
            .collect();
        out.push_str(&format!(
            "note: records of other evaluator epochs were ignored: {}; give --epoch E to read them\n",
            list.join(", ")
        ));
    }
    let omitted = s.components.iter().filter(|c| !c.included).count();
    out.push_str(&format!(
        "{omitted} of {} units could be dropped; their history stays in the ledger\n",
        s.components.len()
    ));
    out
}

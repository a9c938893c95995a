//! The shared parity case (attribution-ledger.md §10, `tests/fixtures/parity/ledger/parity.json`):
//! every section fed to the pure functions and compared exactly (f64 `==`, strings, arrays).
//! Expected values come only from the fixture.

use super::attribute::{attribute, component_key, link_supersedes, round6, trial_effect};
use super::canonical::{canonical, parse_strict, utf16_cmp};
use super::digest::digest;
use super::parse::trial_from_value;
use super::plan::{Candidate, PlanInputs, PlanPolicy, plan};
use super::record::{Attribution, Policy, Trial};
use super::select::{Trust, Unit, select};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

fn fixture() -> Value {
    serde_json::from_str(include_str!(
        "../../../../../tests/fixtures/parity/ledger/parity.json"
    ))
    .expect("the parity fixture parses")
}

fn policy(f: &Value) -> Policy {
    Policy {
        neutral_effect: f["policy"]["neutral_effect"].as_f64().unwrap(),
        high_token_cost: f["policy"]["high_token_cost"].as_u64().unwrap(),
    }
}

fn trials(v: &Value) -> Vec<Trial> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| trial_from_value(t).unwrap())
        .collect()
}

/// Compares every member the fixture gives with the computed record, exactly.
fn assert_attribution(want: &Value, got: &Attribution, initial_id: Option<&str>, case: &str) {
    let fields = got.fields();
    for (k, w) in want.as_object().unwrap() {
        let g = &fields[k.as_str()];
        let w = match (k.as_str(), w.as_str()) {
            ("supersedes", Some("$initial")) => Value::from(initial_id.unwrap()),
            _ => w.clone(),
        };
        match (&w, g) {
            (Value::Number(a), Value::Number(b)) => {
                assert_eq!(a.as_f64(), b.as_f64(), "{case}: {k}")
            }
            _ => assert_eq!(&w, g, "{case}: {k}"),
        }
    }
}

#[test]
fn initial_batch() {
    let f = fixture();
    let sec = &f["initial"];
    let ts = trials(&sec["trials"]);
    for t in &ts {
        let want = sec["expected_trial_effects"][t.trial_id.as_str()].as_f64();
        assert_eq!(Some(trial_effect(t)), want, "{}", t.trial_id);
    }
    let mut agg = attribute(&ts, f["evaluator_epoch"].as_str().unwrap(), &policy(&f)).unwrap();
    assert!(agg.rejections.is_empty());
    link_supersedes(&mut agg.attributions, &mut HashMap::new());
    let want = sec["expected_attributions"].as_array().unwrap();
    assert_eq!(agg.attributions.len(), want.len());
    for (w, g) in want.iter().zip(&agg.attributions) {
        assert_attribution(w, g, None, "initial");
    }
}

fn initial_attribution(f: &Value) -> Attribution {
    let ts = trials(&f["initial"]["trials"]);
    let agg = attribute(&ts, "eval-7", &policy(f)).unwrap();
    agg.attributions.into_iter().next().unwrap()
}

fn reablation_attribution(f: &Value, initial: &Attribution) -> Attribution {
    let mut latest = HashMap::from([(component_key(initial), initial.attribution_id.clone())]);
    let ts = trials(&f["reablation"]["trials"]);
    let mut agg = attribute(&ts, "eval-7", &policy(f)).unwrap();
    assert!(agg.rejections.is_empty());
    link_supersedes(&mut agg.attributions, &mut latest);
    agg.attributions.into_iter().next().unwrap()
}

#[test]
fn reablation_supersedes_the_initial_record() {
    let f = fixture();
    let sec = &f["reablation"];
    let initial = initial_attribution(&f);
    for t in trials(&sec["trials"]) {
        let want = sec["expected_trial_effects"][t.trial_id.as_str()].as_f64();
        assert_eq!(Some(trial_effect(&t)), want);
    }
    let got = reablation_attribution(&f, &initial);
    let want = &sec["expected_attributions"][0];
    assert_attribution(want, &got, Some(&initial.attribution_id), "reablation");
}

#[test]
fn utf16_trial_order() {
    let f = fixture();
    let sec = &f["utf16_trial_order"];
    let agg = attribute(&trials(&sec["trials"]), "eval-7", &policy(&f)).unwrap();
    let a = &agg.attributions[0];
    let want: Vec<String> = serde_json::from_value(sec["expected_trial_ids"].clone()).unwrap();
    assert_eq!(a.trial_ids, want);
    assert_eq!(Some(a.effect), sec["expected_effect"].as_f64());
    assert_eq!(Some(a.confidence), sec["expected_confidence"].as_f64());
    assert_eq!(
        Some(a.disposition.as_str()),
        sec["expected_disposition"].as_str()
    );
}

#[test]
fn rejections() {
    let f = fixture();
    for case in f["rejections"]["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let agg = attribute(&trials(&case["trials"]), "eval-7", &policy(&f)).unwrap();
        let got: HashSet<&str> = agg.rejections.iter().map(|r| r.code.as_str()).collect();
        let want: HashSet<&str> = case["expected_codes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(got, want, "{name}");
        let mut atts = agg.attributions;
        link_supersedes(&mut atts, &mut HashMap::new());
        let want = case["expected_attributions"].as_array().unwrap();
        assert_eq!(atts.len(), want.len(), "{name}");
        for (w, g) in want.iter().zip(&atts) {
            assert_attribution(w, g, None, name);
        }
    }
}

fn budget_inputs(case: &Value) -> (Vec<Candidate>, PlanInputs, PlanPolicy) {
    let candidates = case["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Candidate {
            component_kind: c["component_kind"].as_str().unwrap().to_owned(),
            component_id: c["component_id"].as_str().unwrap().to_owned(),
            component_digest: c["component_digest"].as_str().unwrap().to_owned(),
            token_cost: c["token_cost"].as_u64().unwrap(),
            estimated_cost: c["estimated_cost"].as_u64().unwrap(),
            confidence: c["confidence"].as_f64().unwrap(),
            last_tested_generation: c["last_tested_generation"].as_u64().unwrap(),
            baseline_bundle: c["baseline_bundle"].as_str().unwrap().to_owned(),
            interaction_risk: c["interaction_risk"].as_f64().unwrap(),
            in_current_bundle: true,
        })
        .collect();
    let inputs = PlanInputs {
        current_generation: case["current_generation"].as_u64().unwrap(),
        last_reablation_generation: case["last_reablation_generation"].as_u64().unwrap(),
        plateau_length: case["plateau_length"].as_u64().unwrap(),
        current_bundle: case["current_bundle"].as_str().map(str::to_owned),
    };
    let p = &case["policy"];
    let policy = PlanPolicy {
        cadence: p["cadence"].as_u64().unwrap(),
        plateau: p["plateau"].as_u64().unwrap(),
        budget: p["budget"].as_u64().unwrap(),
    };
    (candidates, inputs, policy)
}

fn check_plan(case: &Value, want: &Value, name: &str) {
    let (c, i, p) = budget_inputs(case);
    let got = plan(&c, &i, &p);
    assert_eq!(
        Some(got.trigger.as_str()),
        want["trigger"].as_str(),
        "{name}"
    );
    assert_eq!(Some(got.spent), want["spent"].as_u64(), "{name}");
    let ids = |v: &[super::plan::Planned]| -> Vec<String> {
        v.iter()
            .map(|p| p.candidate.component_digest.clone())
            .collect()
    };
    let strings = |v: &Value| -> Vec<String> { serde_json::from_value(v.clone()).unwrap() };
    assert_eq!(ids(&got.selected), strings(&want["selected"]), "{name}");
    assert_eq!(ids(&got.deferred), strings(&want["deferred"]), "{name}");
    let all: Vec<_> = got.selected.iter().chain(&got.deferred).collect();
    if let Some(pr) = want["priorities"].as_object() {
        for (digest, w) in pr {
            let p = all
                .iter()
                .find(|p| &p.candidate.component_digest == digest)
                .unwrap();
            assert_eq!(Some(p.priority), w.as_f64(), "{name}: priority of {digest}");
        }
    }
    if let Some(terms) = want["terms"].as_object() {
        for (digest, w) in terms {
            let p = all
                .iter()
                .find(|p| &p.candidate.component_digest == digest)
                .unwrap();
            let t = p.terms;
            for (k, got) in [
                ("tokens", t.tokens),
                ("uncertainty", t.uncertainty),
                ("age", t.age),
                ("interaction", t.interaction),
                ("bundle_changed", t.bundle_changed),
            ] {
                assert_eq!(Some(got), w[k].as_f64(), "{name}: {k} of {digest}");
            }
        }
    }
}

#[test]
fn budget_case_and_variants() {
    let f = fixture();
    let base = &f["budget_case"];
    check_plan(base, &base["expected"], "budget_case");
    for v in f["budget_variants"]["cases"].as_array().unwrap() {
        let mut case = base.clone();
        for (k, val) in v["override"].as_object().unwrap() {
            case[k.as_str()] = val.clone();
        }
        check_plan(&case, &v["expected"], v["name"].as_str().unwrap());
    }
}

#[test]
fn select_after_reablation() {
    let f = fixture();
    let sec = &f["select_after_reablation"];
    let initial = initial_attribution(&f);
    let reablation = reablation_attribution(&f, &initial);
    let history = [(&initial, Trust::Verified), (&reablation, Trust::Verified)];
    let c = &sec["component"];
    let unit = Unit {
        kind: c["component_kind"].as_str().unwrap().to_owned(),
        id: c["component_id"].as_str().unwrap().to_owned(),
        digest: c["component_digest"].as_str().unwrap().to_owned(),
        token_cost: None,
    };
    for case in sec["cases"].as_array().unwrap() {
        let bundle = case["current_bundle"].as_str().unwrap();
        let epoch = case["current_epoch"].as_str().unwrap();
        let got = select(bundle, std::slice::from_ref(&unit), &history, epoch);
        let s = &got.components[0];
        let w = &case["expected"];
        let name = format!("{bundle} {epoch}");
        assert_eq!(Some(s.included), w["included"].as_bool(), "{name}");
        assert_eq!(
            Some(s.disposition.as_str()),
            w["disposition"].as_str(),
            "{name}"
        );
        assert_eq!(
            s.evidence_level.map(|l| l.as_str()),
            w["evidence_level"].as_str(),
            "{name}"
        );
        assert_eq!(Some(s.reason.as_str()), w["reason"].as_str(), "{name}");
    }
}

#[test]
fn round6_vectors() {
    let f = fixture();
    for v in f["round6"]["vectors"].as_array().unwrap() {
        let x = v["x"].as_f64().unwrap();
        let want = v["round6"].as_f64().unwrap();
        let got = round6(x);
        assert_eq!(got, want, "round6({x})");
        assert!(got != 0.0 || got.is_sign_positive(), "round6({x}) is -0");
    }
}

#[test]
fn canonical_json_cases() {
    let f = fixture();
    let sec = &f["canonical_json"];
    for case in sec["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let want = case["canonical"].as_str().unwrap();
        assert_eq!(canonical(&case["value"]).unwrap(), want, "{name}");
        assert_eq!(
            Some(digest(&case["value"]).unwrap().as_str()),
            case["sha256"].as_str(),
            "{name}"
        );
        let reparsed = parse_strict(&serde_json::to_string(&case["value"]).unwrap()).unwrap();
        assert_eq!(canonical(&reparsed).unwrap(), want, "{name} (reparsed)");
        assert_eq!(
            canonical(&parse_strict(want).unwrap()).unwrap(),
            want,
            "{name} (idempotent)"
        );
    }
    for n in sec["numbers"].as_array().unwrap() {
        let text = n["json"].as_str().unwrap();
        let got = parse_strict(text).and_then(|v| canonical(&v)).ok();
        assert_eq!(got.as_deref(), n["canonical"].as_str(), "number {text}");
    }
    for r in sec["must_reject_json"].as_array().unwrap() {
        let text = r["json"].as_str().unwrap();
        assert!(
            parse_strict(text).is_err(),
            "{} must be rejected",
            r["name"]
        );
    }
    let keys: Vec<String> = serde_json::from_value(sec["utf16_key_order"]["keys"].clone()).unwrap();
    let want: Vec<String> =
        serde_json::from_value(sec["utf16_key_order"]["sorted"].clone()).unwrap();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| utf16_cmp(a, b));
    assert_eq!(sorted, want);
    let obj: serde_json::Map<String, Value> =
        keys.iter().map(|k| (k.clone(), Value::Null)).collect();
    let text = canonical(&Value::Object(obj)).unwrap();
    let order: Vec<String> = parse_strict(&text)
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(order, want, "object members in canonical text");
}

//! The parity fixture verdicts.json (influence.md §7): resolve_samples, majority, verdict,
//! similarity_stats and sample_errors, at library level. The whole-probe cases (probes,
//! ablation_runs, restoration_runs) run through a session in `session::tests`.

use super::*;
use crate::experiments::flip::FlipRule;
use crate::experiments::intervention::Intervention;
use serde_json::Value;

/// A run whose steps go by their ids (`s3`), as the calls in these tests are named.
fn no_names() -> Run {
    Run::new("r", crate::analysis::model::RunStatus::Failed)
}

const FIXTURE: &str = include_str!("../../../../tests/fixtures/parity/influence/verdicts.json");
const EPS: f64 = 1e-12;

fn cases(key: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(FIXTURE).unwrap();
    v[key].as_array().unwrap().clone()
}

fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) => match s.as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            other => panic!("bad number {other}"),
        },
        other => other.as_f64().unwrap(),
    }
}

fn usize_of(v: &Value) -> usize {
    usize::try_from(v.as_u64().unwrap()).unwrap()
}

fn stable_baseline(stable: bool, samples: usize) -> Tally {
    Tally {
        samples,
        flips: usize::from(!stable),
        completed: samples,
        errors: 0,
        similarities: Vec::new(),
        answered_by: Default::default(),
    }
}

#[test]
fn resolve_samples_cases() {
    let cs = cases("resolve_samples");
    assert_eq!(cs.len(), 11);
    for c in cs {
        let input = if c["input"].is_null() {
            None
        } else {
            Some(num(&c["input"]))
        };
        assert_eq!(resolve_samples(input), usize_of(&c["expect"]), "{c}");
    }
}

#[test]
fn majority_cases() {
    let cs = cases("majority");
    assert_eq!(cs.len(), 10);
    for c in cs {
        let got = majority(usize_of(&c["flips"]), usize_of(&c["samples"]));
        assert_eq!(got, c["expect"].as_bool().unwrap(), "{c}");
    }
}

#[test]
fn verdict_cases_and_their_claims() {
    let cs = cases("verdict");
    assert_eq!(cs.len(), 8);
    for c in cs {
        let samples = usize_of(&c["samples"]);
        let baseline = stable_baseline(c["baseline_stable"].as_bool().unwrap(), samples);
        let probe = Tally {
            samples,
            flips: usize_of(&c["flips"]),
            completed: samples,
            errors: 0,
            similarities: Vec::new(),
            answered_by: Default::default(),
        };
        let got = verdict(&baseline, &probe);
        assert_eq!(got.as_str(), c["expect"].as_str().unwrap(), "{c}");
        let s = &c["similarity"];
        let sim = SimilarityStats {
            mean: num(&s["mean"]),
            min: num(&s["min"]),
            max: num(&s["max"]),
            stdev: num(&s["stdev"]),
        };
        let ids = vec![crate::analysis::model::UnitId::from("unit-3")];
        let text = claim(
            got,
            &Intervention::Ablate(ids.clone()),
            &probe,
            &sim,
            &baseline,
            "similarity<0.8@mock",
            &no_names(),
        );
        let caps = match got {
            Verdict::Confirmed => "CAUSAL",
            Verdict::Inconclusive => "INCONCLUSIVE",
            Verdict::NotConfirmed => "NOT CONFIRMED",
            Verdict::Error => "ERROR",
        };
        assert!(text.starts_with(caps), "{text}");
        assert!(text.contains("removing 'unit-3'"), "{text}");
        for m in c
            .get("claim_mentions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            assert!(text.contains(m.as_str().unwrap()), "{text} lacks {m}");
        }
    }
}

#[test]
fn claims_say_why_a_verdict_is_inconclusive() {
    let ids = vec![crate::analysis::model::UnitId::from("u")];
    let sim = SimilarityStats::default();
    let probe = Tally {
        samples: 3,
        flips: 3,
        completed: 3,
        ..Tally::default()
    };
    let unstable = stable_baseline(false, 3);
    let t = claim(
        Verdict::Inconclusive,
        &Intervention::Ablate(ids.clone()),
        &probe,
        &sim,
        &unstable,
        "exact",
        &no_names(),
    );
    assert!(
        t.contains("unchanged scenario itself changed outcome"),
        "{t}"
    );
    let minority = Tally {
        samples: 3,
        flips: 1,
        completed: 3,
        ..Tally::default()
    };
    let t = claim(
        Verdict::Inconclusive,
        &Intervention::Restore(ids.clone()),
        &minority,
        &sim,
        &stable_baseline(true, 3),
        "exact",
        &no_names(),
    );
    assert!(
        t.contains("1/3") && t.contains("below a majority") && t.contains("restoring 'u'"),
        "{t}"
    );
    let none = Tally {
        samples: 3,
        completed: 3,
        ..Tally::default()
    };
    let t = claim(
        Verdict::NotConfirmed,
        &Intervention::Ablate(ids.clone()),
        &none,
        &sim,
        &stable_baseline(true, 3),
        "exact",
        &no_names(),
    );
    assert!(
        t.contains("did not change the outcome in 3 reruns") && t.contains("correlational proxy"),
        "{t}"
    );
}

#[test]
fn similarity_stats_cases() {
    let cs = cases("similarity_stats");
    assert_eq!(cs.len(), 4);
    for c in cs {
        let values: Vec<f64> = c["values"].as_array().unwrap().iter().map(num).collect();
        let got = similarity_stats(&values);
        let e = &c["expect"];
        for (g, k) in [
            (got.mean, "mean"),
            (got.min, "min"),
            (got.max, "max"),
            (got.stdev, "stdev"),
        ] {
            assert!((g - num(&e[k])).abs() <= EPS, "{k}: {g} vs {} in {c}", e[k]);
        }
    }
}

#[test]
fn sample_errors_cases() {
    let cs = cases("sample_errors");
    assert_eq!(cs.len(), 5);
    for c in cs {
        let name = c["name"].as_str().unwrap();
        let rule = match c["flip"]["kind"].as_str().unwrap() {
            "contains" => FlipRule::Contains(c["flip"]["text"].as_str().unwrap().to_owned()),
            other => panic!("unexpected rule {other}"),
        };
        let original = c["original"].as_str().unwrap();
        let outputs = c["outputs"].as_array().unwrap();
        let samples = outputs.len();
        let mut probe = Tally {
            samples,
            ..Tally::default()
        };
        for o in outputs {
            match o.as_str() {
                None => probe.errors += 1,
                Some(out) => {
                    probe.completed += 1;
                    if rule.decide(original, out, None) == Some(true) {
                        probe.flips += 1;
                    }
                }
            }
        }
        let baseline_errors = usize_of(&c["baseline_errors"]);
        let mut baseline = stable_baseline(c["baseline_stable"].as_bool().unwrap(), samples);
        baseline.completed -= baseline_errors;
        baseline.errors = baseline_errors;
        let e = &c["expect"];
        assert_eq!(probe.samples, usize_of(&e["samples"]), "{name}");
        assert_eq!(probe.completed, usize_of(&e["completed"]), "{name}");
        assert_eq!(probe.errors, usize_of(&e["errors"]), "{name}");
        assert_eq!(probe.flips, usize_of(&e["flips"]), "{name}");
        assert_eq!(
            verdict(&baseline, &probe).as_str(),
            e["verdict"].as_str().unwrap(),
            "{name}"
        );
        if baseline_errors > 0 {
            assert!(
                baseline
                    .baseline_flags()
                    .contains(&FLAG_BASELINE_INCOMPLETE.to_owned()),
                "{name}"
            );
        }
    }
}

#[test]
fn nothing_completed_anywhere_is_an_error_verdict() {
    let nothing = Tally {
        samples: 3,
        errors: 3,
        ..Tally::default()
    };
    assert_eq!(verdict(&nothing, &nothing), Verdict::Error);
}

#[test]
fn a_runner_that_re_sent_one_call_gets_a_claim_about_that_calls_output_only() {
    let ids = vec![crate::analysis::model::UnitId::from("doc-2022")];
    let by = |c: Option<&str>| -> std::collections::BTreeSet<Option<String>> {
        [c.map(str::to_owned)].into_iter().collect()
    };
    let mut base = stable_baseline(true, 3);
    base.answered_by = by(Some("s3"));
    let probe = Tally {
        samples: 3,
        flips: 3,
        completed: 3,
        answered_by: by(Some("s3")),
        ..Tally::default()
    };
    assert_eq!(verdict(&base, &probe), Verdict::Confirmed);
    let t = claim(
        Verdict::Confirmed,
        &Intervention::Ablate(ids.clone()),
        &probe,
        &SimilarityStats::default(),
        &base,
        "exact",
        &no_names(),
    );
    assert!(
        t.starts_with(
            "CAUSAL: removing 'doc-2022' changed the output of model call 's3' in 3/3 re-sends"
        ) && t.contains("not about the whole run's answer"),
        "{t}"
    );
    // A baseline answered by the whole agent and a probe by one call cannot be compared.
    let mut whole = stable_baseline(true, 3);
    whole.answered_by = by(None);
    assert_eq!(verdict(&whole, &probe), Verdict::Inconclusive);
    let t = claim(
        Verdict::Inconclusive,
        &Intervention::Ablate(ids),
        &probe,
        &SimilarityStats::default(),
        &whole,
        "exact",
        &no_names(),
    );
    assert!(
        t.starts_with("INCONCLUSIVE: the runner answered these reruns from different things")
            && t.contains("the agent's whole run")
            && t.contains("model call 's3' re-sent alone"),
        "{t}"
    );
}

#[test]
fn a_re_sent_call_with_a_span_id_is_named_by_its_name_and_position() {
    // As an imported trace records it: span ids for ids, the call's name beside them.
    let text = r#"{"format": "tdn.run/1", "id": "r", "status": "failed", "final_answer": "sunny",
      "steps": [{"id": "5ba09605e0929d78", "kind": "user", "output": "Weather in Tokyo?"},
                {"id": "90d94774e8e3724d", "kind": "llm", "name": "ChatOpenAI", "output": "sunny"}]}"#;
    let run = crate::analysis::load::load_str(
        text,
        std::path::Path::new("r.json"),
        &crate::analysis::load::LoadOptions::default(),
    )
    .unwrap()
    .remove(0)
    .run;
    let by = |c: &str| -> std::collections::BTreeSet<Option<String>> {
        [Some(c.to_owned())].into_iter().collect()
    };
    let mut base = stable_baseline(true, 3);
    base.answered_by = by("90d94774e8e3724d");
    let probe = Tally {
        samples: 3,
        flips: 3,
        completed: 3,
        answered_by: by("90d94774e8e3724d"),
        ..Tally::default()
    };
    let t = claim(
        Verdict::Confirmed,
        &Intervention::Ablate(vec!["doc".into()]),
        &probe,
        &SimilarityStats::default(),
        &base,
        "exact",
        &run,
    );
    assert!(
        t.contains("the output of model call 'ChatOpenAI' (position 2) in 3/3 re-sends")
            && !t.contains("90d94774e8e3724d"),
        "{t}"
    );
    let spent = crate::experiments::summary::spent_over(3, Some("90d94774e8e3724d"), &run);
    assert!(
        spent.contains("model call 'ChatOpenAI' (position 2)"),
        "{spent}"
    );
}

//! Every case of the parity fixture cost.json (influence.md §8), at library level.

use super::*;
use serde_json::Value;

const FIXTURE: &str = include_str!("../../../../tests/fixtures/parity/influence/cost.json");
const EPS: f64 = 1e-12;

fn fixture() -> Value {
    serde_json::from_str(FIXTURE).unwrap()
}

fn nums(v: Option<&Value>) -> Vec<f64> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().map(|x| x.as_f64().unwrap()).collect())
        .unwrap_or_default()
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= EPS, "{what}: got {a}, expected {b}");
}

fn check_range(got: Option<Range3>, expect: Option<&Value>, what: &str) {
    match expect {
        None => assert!(got.is_none(), "{what}: expected no field, got {got:?}"),
        Some(e) => {
            let g = got.unwrap_or_else(|| panic!("{what}: missing"));
            close(g.median, e["median"].as_f64().unwrap(), what);
            close(g.min, e["min"].as_f64().unwrap(), what);
            close(g.max, e["max"].as_f64().unwrap(), what);
        }
    }
}

fn verdict_of(v: &Value) -> Option<Verdict> {
    v.as_str().map(|s| match s {
        "confirmed" => Verdict::Confirmed,
        "not-confirmed" => Verdict::NotConfirmed,
        "inconclusive" => Verdict::Inconclusive,
        "error" => Verdict::Error,
        other => panic!("unknown verdict {other}"),
    })
}

fn cost_verdict_of(v: &Value) -> Option<CostVerdict> {
    if v.is_null() {
        return None;
    }
    Some(CostVerdict {
        reduced_cost_on_removal: v["reduced_cost_on_removal"].as_bool().unwrap(),
        loops_saved: v["loops_saved"].as_f64().unwrap(),
        tokens_saved: v["tokens_saved"].as_f64().unwrap(),
        stable: v["stable"].as_bool().unwrap(),
    })
}

fn stats_of(v: &Value) -> Option<CostStats> {
    let samples = usize::try_from(v["samples"].as_u64().unwrap()).unwrap();
    cost_stats(samples, &nums(v.get("loops")), &nums(v.get("tokens")))
}

#[test]
fn min_loops_saved_is_the_fixture_constant() {
    assert_eq!(fixture()["min_loops_saved"].as_f64(), Some(MIN_LOOPS_SAVED));
}

#[test]
fn median_cases() {
    let f = fixture();
    let cases = f["median"].as_array().unwrap();
    assert_eq!(cases.len(), 5);
    for c in cases {
        close(
            median(&nums(c.get("values"))),
            c["expect"].as_f64().unwrap(),
            "median",
        );
    }
}

#[test]
fn cost_stats_cases() {
    let f = fixture();
    let cases = f["cost_stats"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for c in cases {
        let got = stats_of(c);
        let e = &c["expect"];
        if e.is_null() {
            assert!(got.is_none(), "{c}");
            continue;
        }
        let g = got.unwrap();
        assert_eq!(g.samples as u64, e["samples"].as_u64().unwrap());
        check_range(g.loops, e.get("loops"), "loops");
        check_range(g.tokens, e.get("tokens"), "tokens");
    }
}

#[test]
fn assign_cases() {
    let f = fixture();
    let cases = f["assign"].as_array().unwrap();
    assert_eq!(cases.len(), 11);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let baseline = stats_of(&c["baseline"]);
        let suspects = c["suspects"].as_array().unwrap();
        let stats: Vec<Option<CostStats>> = suspects.iter().map(stats_of).collect();
        let subjects: Vec<CostSubject<'_>> = suspects
            .iter()
            .zip(&stats)
            .map(|(s, st)| CostSubject {
                id: s["id"].as_str().unwrap(),
                verdict: verdict_of(&s["verdict"]),
                stats: st.as_ref(),
            })
            .collect();
        let got = assign_costs(baseline.as_ref(), &subjects);
        let expect = c["expect"].as_array().unwrap();
        assert_eq!(got.len(), expect.len(), "{name}");
        for ((g, e), subj) in got.iter().zip(expect).zip(&subjects) {
            assert_eq!(subj.id, e["id"].as_str().unwrap(), "{name}");
            let want = cost_verdict_of(&e["cost"]);
            match (g, &want) {
                (None, None) => {}
                (Some(g), Some(w)) => {
                    let what = format!("{name} / {}", subj.id);
                    assert_eq!(
                        g.reduced_cost_on_removal, w.reduced_cost_on_removal,
                        "{what}"
                    );
                    assert_eq!(g.stable, w.stable, "{what}");
                    close(g.loops_saved, w.loops_saved, &what);
                    close(g.tokens_saved, w.tokens_saved, &what);
                }
                _ => panic!("{name} / {}: got {g:?}, expected {want:?}", subj.id),
            }
            let class = classify(subj.verdict, g.as_ref());
            assert_eq!(
                class.as_str(),
                e["class"].as_str().unwrap(),
                "{name} / {}",
                subj.id
            );
        }
    }
}

#[test]
fn classify_cases() {
    let f = fixture();
    let cases = f["classify"].as_array().unwrap();
    assert_eq!(cases.len(), 9);
    for c in cases {
        let got = classify(
            verdict_of(&c["verdict"]),
            cost_verdict_of(&c["cost"]).as_ref(),
        );
        assert_eq!(got.as_str(), c["expect"].as_str().unwrap(), "{c}");
    }
}

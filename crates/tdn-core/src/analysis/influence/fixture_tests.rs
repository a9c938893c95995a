//! The library-level parity fixtures (tests/fixtures/parity/influence): signals.json, and every
//! case of confidence.json through the library API, including the custom-strategy cases the
//! command line cannot express. Expected values come from the fixtures only.

use super::*;
use crate::analysis::js_number::js_number;
use serde_json::Value;

const TOLERANCE: f64 = 1e-12;

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/parity/influence/{name}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn num(v: &Value) -> f64 {
    num_text::from_value(v).unwrap_or_else(|| panic!("not a number: {v}"))
}

fn vector(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(num).collect()
}

fn vectors(v: &Value) -> Vec<Vec<f64>> {
    v.as_array().unwrap().iter().map(vector).collect()
}

fn weights(v: &Value) -> Weights {
    Weights {
        fa: num(&v["fa"]),
        avg: num(&v["avg"]),
        persist: num(&v["persist"]),
        depth: num(&v["depth"]),
    }
}

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= TOLERANCE || (got.is_nan() && want.is_nan()) || got == want,
        "{what}: got {got}, want {want}"
    );
}

fn cases<'a>(f: &'a Value, key: &str) -> &'a Vec<Value> {
    f[key].as_array().unwrap()
}

#[test]
fn cosine_cases() {
    let f = fixture("signals.json");
    for c in cases(&f, "cosine") {
        let got = cosine(&vector(&c["a"]), &vector(&c["b"]));
        if c.get("expect_error").is_some() {
            assert!(got.is_err(), "{c}");
        } else {
            close(got.unwrap(), num(&c["expect"]), &c.to_string());
        }
    }
}

#[test]
fn ancestor_signal_cases() {
    let f = fixture("signals.json");
    for c in cases(&f, "average_relevancy") {
        let anc = vectors(&c["ancestors"]);
        let refs: Vec<&[f64]> = anc.iter().map(Vec::as_slice).collect();
        close(
            average_relevancy(&vector(&c["e"]), &refs).unwrap(),
            num(&c["expect"]),
            &c.to_string(),
        );
    }
    for c in cases(&f, "persistence") {
        let anc = vectors(&c["ancestors"]);
        let refs: Vec<&[f64]> = anc.iter().map(Vec::as_slice).collect();
        let t = if c["threshold"].is_null() {
            DEFAULT_PERSISTENCE_THRESHOLD
        } else {
            num(&c["threshold"])
        };
        close(
            persistence(&vector(&c["e"]), &refs, t).unwrap(),
            num(&c["expect"]),
            &c.to_string(),
        );
    }
    for c in cases(&f, "depth") {
        let n = c["n"].as_u64().unwrap() as usize;
        close(depth(n), num(&c["expect"]), &c.to_string());
        close(
            depth_of(n as f64).unwrap(),
            num(&c["expect"]),
            &c.to_string(),
        );
    }
}

#[test]
fn weight_cases() {
    let f = fixture("signals.json");
    for c in cases(&f, "adapt_weights") {
        let got = adapt_weights(
            &weights(&c["weights"]),
            c["ancestors"].as_u64().unwrap() as usize,
        );
        let want = weights(&c["expect"]["weights"]);
        for (g, w, name) in [
            (got.weights.fa, want.fa, "fa"),
            (got.weights.avg, want.avg, "avg"),
            (got.weights.persist, want.persist, "persist"),
            (got.weights.depth, want.depth, "depth"),
        ] {
            close(g, w, &format!("{name} in {c}"));
        }
        assert_eq!(
            got.adapted,
            c["expect"]["adapted"].as_bool().unwrap(),
            "{c}"
        );
    }
    for c in cases(&f, "composite") {
        let s = &c["signals"];
        let signals = Signals {
            fa: num(&s["fa"]),
            avg: num(&s["avg"]),
            persist: num(&s["persist"]),
            depth: num(&s["depth"]),
        };
        close(
            composite(&signals, &weights(&c["weights"])),
            num(&c["expect"]),
            &c.to_string(),
        );
    }
    for c in cases(&f, "validate_weights") {
        let got = validate_weights(&weights(&c["weights"]));
        if c["valid"].as_bool().unwrap() {
            assert!(got.is_ok(), "{c}");
        } else {
            let msg = got.unwrap_err().to_string();
            let names = c["names"].as_str().unwrap();
            if names == "all zero" {
                assert!(msg.contains("all four weights"), "{msg}");
            } else {
                assert!(
                    msg.contains(&format!("'{names}'")),
                    "{msg} should name {names}"
                );
            }
        }
    }
}

#[test]
fn mock_embedder_cases() {
    let f = fixture("signals.json");
    for c in cases(&f, "mock_embedder") {
        let v = mock_vector(c["text"].as_str().unwrap());
        assert_eq!(v.len() as u64, c["dims"].as_u64().unwrap());
        let nonzero = c["nonzero"].as_object().unwrap();
        for (i, x) in v.iter().enumerate() {
            let want = nonzero.get(&i.to_string()).map_or(0.0, num);
            assert_eq!(*x, want, "index {i} of {c}");
        }
    }
}

#[test]
fn tokenizer_and_overlap_cases() {
    let f = fixture("signals.json");
    for c in cases(&f, "tokenize") {
        let mut want: Vec<String> = c["expect"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_owned())
            .collect();
        want.sort();
        assert_eq!(token_set(c["text"].as_str().unwrap()), want, "{c}");
    }
    for c in cases(&f, "overlap") {
        let (a, b) = (c["a"].as_str().unwrap(), c["b"].as_str().unwrap());
        close(overlap(a, b), num(&c["expect"]), &c.to_string());
        // The lexical embedder's cosine is the same number.
        let v = LexicalEmbedder.embed(&[a, b]).unwrap();
        close(
            cosine(&v[0], &v[1]).unwrap(),
            num(&c["expect"]),
            &c.to_string(),
        );
    }
}

#[test]
fn number_format_cases() {
    let f = fixture("signals.json");
    for c in cases(&f, "number_format") {
        assert_eq!(
            js_number(num(&c["value"])),
            c["expect"].as_str().unwrap(),
            "{c}"
        );
    }
}

/// A custom rule that always (or never) says clear, as confidence.json's `constant` strategy.
struct Constant {
    clear: bool,
    name: String,
}

impl ClearWinnerRule for Constant {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn is_clear_winner(&self, ranked: &[f64]) -> bool {
        assert!(ranked.len() >= 2 && ranked.iter().all(|s| s.is_finite()));
        assert!(ranked.windows(2).all(|w| w[0] >= w[1]), "sorted descending");
        self.clear
    }
}

#[test]
fn confidence_cases_through_the_library() {
    let f = fixture("confidence.json");
    let mut ran = 0;
    for c in f.as_array().unwrap() {
        let Some(opts) = c["options"].as_object() else {
            continue; // command-line-only cases (two strategies at once, a bad score)
        };
        let margin;
        let ratio;
        let constant;
        let strategy: Option<&dyn ClearWinnerRule> = match opts.get("strategy") {
            None => None,
            Some(s) if s.get("margin").is_some() => {
                margin = Strategy::Margin(num(&s["margin"]));
                Some(&margin)
            }
            Some(s) if s.get("ratio").is_some() => {
                ratio = Strategy::Ratio(num(&s["ratio"]));
                Some(&ratio)
            }
            Some(s) => {
                constant = Constant {
                    clear: s["constant"].as_bool().unwrap(),
                    name: s["name"].as_str().unwrap().to_owned(),
                };
                Some(&constant)
            }
        };
        let req = ConfidenceRequest {
            strategy,
            clear_winner_margin: opts.get("clear_winner_margin").map(num),
            shortlist_band: opts.get("shortlist_band").map(num),
        };
        let scores: Vec<(String, f64)> = c["input"]["scores"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["id"].as_str().unwrap().to_owned(), num(&e["score"])))
            .collect();
        let pairs: Vec<(&str, f64)> = scores.iter().map(|(i, s)| (i.as_str(), *s)).collect();
        let got = try_ranking_confidence(&pairs, &req);
        ran += 1;
        if c.get("expect_error").is_some() {
            assert!(got.is_err(), "{}", c["name"]);
            continue;
        }
        let got = got.unwrap_or_else(|e| panic!("{}: {e}", c["name"]));
        let want = &c["expect"];
        let name = c["name"].as_str().unwrap();
        assert_eq!(
            got.clear_winner,
            want["clear_winner"].as_bool().unwrap(),
            "{name}"
        );
        match (&got.margin, &want["margin"]) {
            (None, Value::Null) => {}
            (Some(m), w) if !w.is_null() => close(*m, num(w), name),
            (g, w) => panic!("{name}: margin {g:?}, want {w}"),
        }
        assert_eq!(got.lead.as_deref(), want["lead"].as_str(), "{name}");
        let shortlist: Vec<&str> = want["shortlist"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(got.shortlist, shortlist, "{name}");
        assert_eq!(got.strategy, want["strategy"].as_str().unwrap(), "{name}");
        if pairs.len() >= 2 {
            assert!(got.reason.contains(&got.strategy), "{name}: {}", got.reason);
            if !got.clear_winner {
                assert!(
                    got.reason.contains(&got.shortlist.len().to_string()),
                    "{name}"
                );
            }
        }
    }
    assert!(ran >= 40, "only {ran} cases ran");
}

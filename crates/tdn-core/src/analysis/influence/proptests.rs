//! Property tests: the invariants of ranking confidence (influence.md §5) on thousands of random
//! rankings, with ties, malformed scores, duplicate ids and edge thresholds.

use super::{
    ClearWinnerRule, ConfidenceError, ConfidenceOptions, ConfidenceRequest, Strategy as Rule,
    ranking_confidence, try_ranking_confidence,
};
use proptest::prelude::*;

/// Scores drawn to hit ties, signs, and every kind of malformed value.
fn score() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => -2.0..2.0_f64,
        3 => (0..8).prop_map(|k| f64::from(k) / 8.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(-0.0),
    ]
}

fn threshold() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(0.05), 0.0..1.0_f64, Just(f64::INFINITY),]
}

fn rule() -> impl Strategy<Value = Rule> {
    prop_oneof![
        threshold().prop_map(Rule::Margin),
        threshold().prop_map(Rule::Ratio),
    ]
}

fn band() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(0.1), 0.0..1.0_f64, Just(f64::INFINITY)]
}

/// Ids: distinct by position, or drawn from a small pool so duplicates happen.
fn ranking() -> impl Strategy<Value = Vec<(String, f64)>> {
    prop_oneof![
        prop::collection::vec(score(), 0..12).prop_map(|s| {
            s.into_iter()
                .enumerate()
                .map(|(i, x)| (format!("u{i}"), x))
                .collect()
        }),
        prop::collection::vec(((0..4u8).prop_map(|k| format!("d{k}")), score()), 0..8),
    ]
}

fn fin(x: f64) -> f64 {
    if x.is_finite() { x } else { f64::NEG_INFINITY }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn ranking_confidence_keeps_its_invariants(input in ranking(), rule in rule(), band in band()) {
        let pairs: Vec<(&str, f64)> = input.iter().map(|(i, s)| (i.as_str(), *s)).collect();
        let before: Vec<(String, u64)> = input.iter().map(|(i, s)| (i.clone(), s.to_bits())).collect();
        let opts = ConfidenceOptions { strategy: rule, band };
        let c = ranking_confidence(&pairs, &opts);

        // The input is untouched.
        let after: Vec<(String, u64)> = input.iter().map(|(i, s)| (i.clone(), s.to_bits())).collect();
        prop_assert_eq!(before, after);
        prop_assert_eq!(&c.strategy, &rule.name());

        let n = pairs.len();
        // The lead: the first entry, in input order, of the highest fin(score).
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| fin(pairs[b].1).partial_cmp(&fin(pairs[a].1)).unwrap());
        let lead = order.first().map(|&i| pairs[i].0);
        prop_assert_eq!(c.lead.as_deref(), lead);

        // Each shortlisted id once, each one from the input.
        let mut ids = c.shortlist.clone();
        ids.sort();
        ids.dedup();
        prop_assert_eq!(ids.len(), c.shortlist.len());
        prop_assert!(c.shortlist.iter().all(|s| pairs.iter().any(|p| p.0 == s)));

        if n == 0 {
            prop_assert!(!c.clear_winner && c.margin.is_none() && c.shortlist.is_empty());
            return Ok(());
        }
        // The shortlist always holds the lead.
        prop_assert!(c.shortlist.iter().any(|s| Some(s.as_str()) == lead));
        if n == 1 {
            prop_assert!(c.clear_winner && c.margin.is_none());
            prop_assert_eq!(c.shortlist.len(), 1);
            return Ok(());
        }
        let top = pairs[order[0]].1;
        let second = pairs[order[1]].1;
        let runner_up = pairs[order[1]].0;
        // A margin exactly when both of the top two are finite.
        match c.margin {
            Some(m) => {
                prop_assert!(top.is_finite() && second.is_finite());
                prop_assert_eq!(m.to_bits(), (top - second).to_bits());
            }
            None => prop_assert!(!(top.is_finite() && second.is_finite())),
        }
        // All malformed is never clear; a finite top over a malformed runner-up always is.
        if !top.is_finite() {
            prop_assert!(!c.clear_winner);
        } else if !second.is_finite() {
            prop_assert!(c.clear_winner);
        } else {
            let gap = top - second;
            let expected = match rule {
                Rule::Margin(t) => gap >= t,
                Rule::Ratio(t) => top.abs() != 0.0 && gap / top.abs() >= t,
            };
            prop_assert_eq!(c.clear_winner, expected);
        }
        // When not clear, the runner-up is shortlisted, and the reason says how many to re-run.
        if !c.clear_winner {
            prop_assert!(c.shortlist.iter().any(|s| s == runner_up));
            prop_assert!(c.reason.contains(&c.shortlist.len().to_string()));
        }
        prop_assert!(c.reason.contains(&c.strategy));
        // The band: every finite score within it of a finite top is in; nothing else is, apart
        // from the lead and (when not clear) the runner-up.
        for (id, s) in &pairs {
            let in_band = top.is_finite() && s.is_finite() && top - s <= band;
            let listed = c.shortlist.iter().any(|x| x == id);
            if in_band {
                prop_assert!(listed, "{} within the band is missing", id);
            } else if listed {
                let dup_ok = pairs.iter().any(|(j, t)| j == id && top.is_finite() && t.is_finite() && top - t <= band);
                prop_assert!(dup_ok || Some(*id) == lead || (!c.clear_winner && *id == runner_up),
                    "{} is shortlisted without a reason", id);
            }
        }
    }

    #[test]
    fn invalid_options_fail_before_anything_is_ranked(t in prop_oneof![Just(f64::NAN), -10.0..-1e-9_f64], n in 0usize..3) {
        let scores: Vec<(String, f64)> = (0..n).map(|i| (format!("s{i}"), 0.5)).collect();
        let pairs: Vec<(&str, f64)> = scores.iter().map(|(i, s)| (i.as_str(), *s)).collect();
        let margin = Rule::Margin(t);
        let ratio = Rule::Ratio(t);
        for rule in [&margin as &dyn ClearWinnerRule, &ratio] {
            let req = ConfidenceRequest { strategy: Some(rule), ..ConfidenceRequest::default() };
            let threshold_error = matches!(
                try_ranking_confidence(&pairs, &req),
                Err(ConfidenceError::Threshold { .. })
            );
            prop_assert!(threshold_error);
        }
        let req = ConfidenceRequest { shortlist_band: Some(t), ..ConfidenceRequest::default() };
        prop_assert!(matches!(try_ranking_confidence(&pairs, &req), Err(ConfidenceError::Band(_))));
        let req = ConfidenceRequest { clear_winner_margin: Some(t), ..ConfidenceRequest::default() };
        prop_assert!(matches!(try_ranking_confidence(&pairs, &req), Err(ConfidenceError::ClearWinnerMargin(_))));
    }
}

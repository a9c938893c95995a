//! Ranking confidence (influence.md §5): is the top of a ranking clear, or too close to call, and
//! which suspects should a re-run test? It reads only ids and scores and never changes its input.
//! The same rules serve two rankings whose scores mean different things (a [`RankingSubject`]):
//! influence scores are similarity proxies, rule scores order the diagnosis' findings. Neither is
//! a probability, and only a re-run proves a cause.

use super::score::{fin, sort_by_score};
use super::types::{ConfidenceOptions, RankingConfidence, Strategy};
use crate::analysis::js_number::js_number;
use crate::analysis::model::inert_line;
use hashbrown::HashSet;

/// The default `clear_winner_margin` of the margin strategy.
pub const DEFAULT_CLEAR_WINNER_MARGIN: f64 = 0.05;
/// The default shortlist band.
pub const DEFAULT_SHORTLIST_BAND: f64 = 0.1;

/// The validation rule of thresholds and bands: `x >= 0` is true. Negatives and NaN fail;
/// `+Infinity` and `-0` pass.
pub fn non_negative(x: f64) -> bool {
    x >= 0.0
}

/// A rule that says whether the top of a ranking clearly leads. It only ever sees finite
/// scores, sorted descending, at least two of them.
pub trait ClearWinnerRule {
    /// The name shown in results, e.g. `margin>=0.05`.
    fn name(&self) -> String;
    /// True when `ranked[0]` clearly leads.
    fn is_clear_winner(&self, ranked: &[f64]) -> bool;
    /// Checks the rule's own parameters before anything is ranked.
    fn validate(&self) -> Result<(), ConfidenceError> {
        Ok(())
    }
}

impl ClearWinnerRule for Strategy {
    fn name(&self) -> String {
        match self {
            Strategy::Margin(t) => format!("margin>={}", js_number(*t)),
            Strategy::Ratio(t) => format!("ratio>={}", js_number(*t)),
        }
    }

    fn is_clear_winner(&self, ranked: &[f64]) -> bool {
        let (Some(&s0), Some(&s1)) = (ranked.first(), ranked.get(1)) else {
            return false;
        };
        match self {
            Strategy::Margin(t) => s0 - s1 >= *t,
            Strategy::Ratio(t) => s0.abs() != 0.0 && (s0 - s1) / s0.abs() >= *t,
        }
    }

    fn validate(&self) -> Result<(), ConfidenceError> {
        match *self {
            Strategy::Margin(t) if !non_negative(t) => Err(ConfidenceError::Threshold {
                strategy: "margin",
                value: t,
            }),
            Strategy::Ratio(t) if !non_negative(t) => Err(ConfidenceError::Threshold {
                strategy: "ratio",
                value: t,
            }),
            _ => Ok(()),
        }
    }
}

/// Options that failed validation (a value passes when `x >= 0` is true).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConfidenceError {
    /// The strategy's threshold is negative or NaN.
    #[error("the {strategy} strategy threshold '{}' must be a number >= 0", js_number(*.value))]
    Threshold {
        /// `margin` or `ratio`.
        strategy: &'static str,
        /// The value given.
        value: f64,
    },
    /// `clear_winner_margin` (used when no strategy is given) is negative or NaN.
    #[error("the clear-winner margin '{}' must be a number >= 0", js_number(*.0))]
    ClearWinnerMargin(f64),
    /// The shortlist band is negative or NaN.
    #[error("the shortlist band '{}' must be a number >= 0", js_number(*.0))]
    Band(f64),
}

/// The library-level request, as agentfootprint takes it: an explicit strategy decides (and
/// `clear_winner_margin` is then ignored, not even validated); otherwise the margin strategy with
/// `clear_winner_margin` (default 0.05). `shortlist_band` defaults to 0.1.
#[derive(Clone, Copy, Default)]
pub struct ConfidenceRequest<'s> {
    /// The clear-winner rule, when given.
    pub strategy: Option<&'s dyn ClearWinnerRule>,
    /// The margin when no strategy is given.
    pub clear_winner_margin: Option<f64>,
    /// The shortlist band.
    pub shortlist_band: Option<f64>,
}

/// Which ranking a confidence speaks of. The numbers and rules are the same; only the `reason`
/// differs, so that it says what the scores are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RankingSubject {
    /// Influence scores: how much each piece of context resembles the answer (influence.md).
    /// What the toolbox commands rank.
    #[default]
    Similarity,
    /// The rule scores of the suspects of a run that failed: an ordering of rule findings.
    Suspects,
    /// The rule scores of a run that did not fail (succeeded, or not finished): what the rules
    /// noticed, with no failure to explain.
    Observations,
}

/// The confidence of a ranking given as `(id, score)` pairs in any order. Options that fail
/// validation (they come validated from the settings) are replaced by the defaults, and a
/// warning is logged; use [`try_ranking_confidence`] to get the error instead. The reason
/// speaks of similarity scores; use [`ranking_confidence_of`] for another ranking.
pub fn ranking_confidence(scores: &[(&str, f64)], opts: &ConfidenceOptions) -> RankingConfidence {
    ranking_confidence_of(scores, opts, RankingSubject::Similarity)
}

/// [`ranking_confidence`] of the given ranking: the same fields, a reason that says what the
/// scores are.
pub fn ranking_confidence_of(
    scores: &[(&str, f64)],
    opts: &ConfidenceOptions,
    subject: RankingSubject,
) -> RankingConfidence {
    let strategy = if opts.strategy.validate().is_ok() {
        opts.strategy
    } else {
        tracing::warn!(strategy = ?opts.strategy, "invalid confidence strategy; using the default");
        Strategy::default()
    };
    let band = if non_negative(opts.band) {
        opts.band
    } else {
        tracing::warn!(
            band = opts.band,
            "invalid shortlist band; using the default"
        );
        DEFAULT_SHORTLIST_BAND
    };
    rank(scores, &strategy, band, subject)
}

/// [`ranking_confidence`] for a [`ConfidenceRequest`]: options are resolved and validated before
/// anything else, so bad options fail even on an empty list.
pub fn try_ranking_confidence(
    scores: &[(&str, f64)],
    req: &ConfidenceRequest<'_>,
) -> Result<RankingConfidence, ConfidenceError> {
    let band = req.shortlist_band.unwrap_or(DEFAULT_SHORTLIST_BAND);
    let default_rule;
    let rule: &dyn ClearWinnerRule = match req.strategy {
        Some(rule) => rule,
        None => {
            let t = req
                .clear_winner_margin
                .unwrap_or(DEFAULT_CLEAR_WINNER_MARGIN);
            if !non_negative(t) {
                return Err(ConfidenceError::ClearWinnerMargin(t));
            }
            default_rule = Strategy::Margin(t);
            &default_rule
        }
    };
    rule.validate()?;
    if !non_negative(band) {
        return Err(ConfidenceError::Band(band));
    }
    Ok(rank(scores, rule, band, RankingSubject::Similarity))
}

/// The rules of §5 once the options are valid.
fn rank(
    scores: &[(&str, f64)],
    rule: &dyn ClearWinnerRule,
    band: f64,
    subject: RankingSubject,
) -> RankingConfidence {
    let name = rule.name();
    let mut sorted: Vec<(&str, f64)> = scores.iter().map(|&(id, s)| (id, fin(s))).collect();
    sort_by_score(&mut sorted, |e| e.1);
    let lead = sorted.first().map(|e| e.0);
    let (clear_winner, margin) = match sorted.as_slice() {
        [] => (false, None),
        [_] => (true, None),
        [(_, top), (_, second), ..] => {
            if !top.is_finite() {
                (false, None)
            } else if !second.is_finite() {
                (true, None)
            } else {
                let finite: Vec<f64> = sorted
                    .iter()
                    .map(|e| e.1)
                    .take_while(|s| s.is_finite())
                    .collect();
                (rule.is_clear_winner(&finite), Some(top - second))
            }
        }
    };

    // Built in order, each id once: the band near a finite top, the lead, then the runner-up
    // when the top is not clear.
    let mut shortlist: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut add = |id| {
        if seen.insert(id) {
            shortlist.push(id);
        }
    };
    if let Some(&(_, top)) = sorted.first()
        && top.is_finite()
    {
        for &(id, s) in sorted.iter().take_while(|e| e.1.is_finite()) {
            if top - s <= band {
                add(id);
            }
        }
    }
    if let Some(l) = lead {
        add(l);
    }
    if !clear_winner && let Some(&(runner_up, _)) = sorted.get(1) {
        add(runner_up);
    }

    let reason = reason(
        &Outcome {
            n: scores.len(),
            lead,
            clear: clear_winner,
            margin,
            strategy: &name,
            shortlisted: shortlist.len(),
        },
        subject,
    );
    RankingConfidence {
        clear_winner,
        margin,
        lead: lead.map(str::to_owned),
        shortlist: shortlist.into_iter().map(str::to_owned).collect(),
        strategy: name,
        reason,
    }
}

/// What the reason sentence is about.
struct Outcome<'a> {
    n: usize,
    lead: Option<&'a str>,
    clear: bool,
    margin: Option<f64>,
    strategy: &'a str,
    shortlisted: usize,
}

/// The sentence for people (never parse it). It says which tier the result belongs to: for
/// influence scores a similarity proxy, for rule scores an ordering of findings; either way not
/// a probability, and a cause needs a re-run.
fn reason(o: &Outcome<'_>, subject: RankingSubject) -> String {
    let lead = o.lead.map(inert_line).unwrap_or_default();
    let strategy = o.strategy;
    let shortlisted = o.shortlisted;
    let margin3 = o
        .margin
        .map_or_else(|| "n/a".to_owned(), |m| format!("{m:.3}"));
    let by = match o.margin {
        Some(m) => format!("leads by a margin of {m:.3}"),
        None => "leads; the runner-up had no usable score".to_owned(),
    };
    let word = if shortlisted == 1 {
        "suspect"
    } else {
        "suspects"
    };
    match (subject, o.n) {
        (RankingSubject::Similarity, 0) => {
            "There is nothing to rank: no scores were given.".to_owned()
        }
        (RankingSubject::Similarity, 1) => format!(
            "Only one suspect, '{lead}': it is the clear winner only because there is nothing to \
             compare it with. Its score is a similarity proxy; a causal claim needs a re-run \
             without it."
        ),
        (RankingSubject::Similarity, _) if o.clear => format!(
            "'{lead}' is the clear winner under {strategy}: it {by}. A clear lead is a \
             similarity proxy, not a proven cause: confirm it by ablation (re-run without it)."
        ),
        (RankingSubject::Similarity, _) => format!(
            "The top is too close to call under {strategy}: the margin is {margin3}. Re-run the \
             {shortlisted} shortlisted {word}, each removed in turn. Similarity cannot see \
             absence or crowding bugs (truncated history, diluted context), where the culprit \
             need not resemble the answer; a flat top can also mean the sources matter equally."
        ),
        (RankingSubject::Suspects, 0) => {
            "There is nothing to rank: no rule found a suspect.".to_owned()
        }
        (RankingSubject::Suspects, 1) => format!(
            "Only one suspect, '{lead}': it is the clear winner only because there is nothing to \
             compare it with. A rule finding is where to look first, not a proven cause: a \
             re-run without it shows whether it caused the failure."
        ),
        (RankingSubject::Suspects, _) if o.clear => format!(
            "'{lead}' is the clear winner under {strategy}: it {by}. Rule scores only put the \
             rules' findings in order; they are not the chance of being right. A clear lead is \
             where to look first, not a proven cause: a re-run without it shows whether it \
             caused the failure."
        ),
        (RankingSubject::Suspects, _) => format!(
            "The top is too close to call under {strategy}: the margin is {margin3}. Check the \
             evidence of the {shortlisted} shortlisted {word}, and re-run each removed in turn: \
             rule scores only put findings in order, and these score too close for the order \
             to say which one to blame."
        ),
        (RankingSubject::Observations, 0) => {
            "There is nothing to rank: the rules flagged no step, and the run did not fail."
                .to_owned()
        }
        (RankingSubject::Observations, 1) => format!(
            "Only one step was flagged, '{lead}': it is the clear winner only because there is \
             nothing to compare it with. The run did not fail, so this is an observation, not \
             the cause of a failure."
        ),
        (RankingSubject::Observations, _) if o.clear => format!(
            "'{lead}' is the clear winner under {strategy}: it {by}. The run did not fail: rule \
             scores only put what the rules noticed in order, not causes of a failure, and they \
             are not probabilities."
        ),
        (RankingSubject::Observations, _) => format!(
            "The top is too close to call under {strategy}: the margin is {margin3}. The run did \
             not fail, so the {shortlisted} shortlisted {word} are observations, not causes; to \
             learn whether one matters, re-run each removed in turn."
        ),
    }
}

//! What a run cost in dollars, per step and in all (the report's `cost`, docs/report.md): the
//! cost a trace records (Langfuse `costDetails`, OpenInference `llm.cost.*`, ATIF `cost_usd`,
//! read by the importers into a step's `usage.cost_usd` and the run's `cost_usd`), else an
//! estimate from the step's tokens and the [`prices`] of its model. An estimate is always marked
//! as one. Plain synchronous code over the run; one pass over the steps.

pub mod prices;

pub use prices::{PRICES_AS_OF, Price, Prices};

/// The built-in price table, for analyses that name no other.
pub static BUILT_IN_PRICES: Prices = Prices::built_in();

use crate::analysis::model::{Run, Step};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Where a cost came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CostSource {
    /// The trace records it.
    Recorded,
    /// Worked out from the tokens and a price table: an estimate.
    Estimated,
}

/// One step's cost (`cost.steps[]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepCost {
    /// Step id.
    pub step: String,
    /// 0-based position.
    pub index: usize,
    /// US dollars.
    pub usd: f64,
    /// `recorded` or `estimated`.
    pub source: CostSource,
    /// For an estimate: the price table's model name it was priced as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priced_as: Option<String>,
    /// False when a step nested inside this one has a cost too: the run's total counts the
    /// nested steps' costs, not this one (a span that sums its children's cost would count twice).
    pub in_total: bool,
}

/// `cost`: what the run cost (absent when no step records a cost or tokens of a named model, and
/// the run records no total). With no cost at all it still lists the models without a price.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostSection {
    /// US dollars: the run's recorded total when it records one, else the sum of the steps'
    /// costs that are `in_total`.
    pub total_usd: f64,
    /// `recorded` when every part of the total is recorded, else `estimated`.
    pub source: CostSource,
    /// The total is the run's own recorded figure (`run`) or the steps' sum (`steps`).
    pub total_from: TotalFrom,
    /// The part of the steps' sum that is recorded.
    pub recorded_usd: f64,
    /// The part of the steps' sum that is estimated.
    pub estimated_usd: f64,
    /// When the built-in prices were taken.
    pub prices_as_of: String,
    /// Models some step used, with tokens and no recorded cost, that no price is known for:
    /// those steps have no cost, and the total leaves them out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced_models: Vec<String>,
    /// Steps with tokens and no recorded cost whose model is not named: left out the same way.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_steps: usize,
    /// Every step with a cost, in step order.
    pub steps: Vec<StepCost>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Where the total came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TotalFrom {
    /// The run records its total.
    Run,
    /// The steps' costs, added.
    Steps,
}

impl CostSection {
    /// True when some part of the total is an estimate.
    pub fn estimated(&self) -> bool {
        self.source == CostSource::Estimated
    }

    /// True when it holds a total worth showing: the run's own, or some step's cost.
    pub fn known(&self) -> bool {
        self.total_from == TotalFrom::Run || !self.steps.is_empty()
    }
}

/// Attribute keys that name the model a step called, in the order they are tried after the
/// step's `model`.
const MODEL_KEYS: [&str; 6] = [
    "gen_ai.response.model",
    "gen_ai.request.model",
    "llm.model_name",
    "langfuse.model",
    "atif.model_name",
    "ai.model.id",
];

/// The model a step called: its `model`, else the model its attributes name, else the run's.
pub fn step_model<'a>(run: &'a Run, step: &'a Step) -> Option<&'a str> {
    step.request_model()
        .or_else(|| {
            MODEL_KEYS
                .iter()
                .find_map(|k| step.attributes().get(*k).and_then(|v| v.as_str()))
        })
        .or_else(|| run.model.as_ref().and_then(|m| m.name.as_deref()))
        .filter(|m| !m.trim().is_empty())
}

/// The run's cost section; `None` when nothing in it has a cost.
pub fn cost_section(run: &Run, prices: &Prices) -> Option<CostSection> {
    let mut steps = Vec::new();
    let mut unpriced: BTreeSet<String> = BTreeSet::new();
    let mut unpriced_steps = 0;
    for step in &run.steps {
        let Some(u) = step.usage() else {
            continue;
        };
        if let Some(usd) = u.cost() {
            steps.push(StepCost {
                step: step.id.as_str().to_owned(),
                index: step.index,
                usd,
                source: CostSource::Recorded,
                priced_as: None,
                in_total: true,
            });
            continue;
        }
        let tokens = u
            .input_tokens
            .unwrap_or(0)
            .saturating_add(u.output_tokens.unwrap_or(0));
        if tokens == 0 {
            continue;
        }
        let Some(model) = step_model(run, step) else {
            unpriced_steps += 1;
            continue;
        };
        match prices.lookup(model) {
            Some(p) => steps.push(StepCost {
                step: step.id.as_str().to_owned(),
                index: step.index,
                usd: p.price.of(u.input_tokens, u.output_tokens),
                source: CostSource::Estimated,
                priced_as: Some(p.name),
                in_total: true,
            }),
            None => {
                if unpriced.len() < MAX_UNPRICED {
                    unpriced.insert(crate::analysis::model::inert_line(model).into_owned());
                }
            }
        }
    }
    // A run with no cost at all still says which models lack a price, so the user can add one.
    if steps.is_empty() && run.cost_usd.is_none() && unpriced.is_empty() {
        return None;
    }
    mark_nested(run, &mut steps);
    let (mut recorded, mut estimated) = (0.0, 0.0);
    for s in steps.iter().filter(|s| s.in_total) {
        match s.source {
            CostSource::Recorded => recorded += s.usd,
            CostSource::Estimated => estimated += s.usd,
        }
    }
    let (total_usd, total_from, source) = match run.cost_usd {
        Some(t) => (t, TotalFrom::Run, CostSource::Recorded),
        None if steps
            .iter()
            .any(|s| s.in_total && s.source == CostSource::Estimated) =>
        {
            (
                recorded + estimated,
                TotalFrom::Steps,
                CostSource::Estimated,
            )
        }
        None => (recorded, TotalFrom::Steps, CostSource::Recorded),
    };
    Some(CostSection {
        total_usd,
        source,
        total_from,
        recorded_usd: recorded,
        estimated_usd: estimated,
        prices_as_of: PRICES_AS_OF.to_owned(),
        unpriced_models: unpriced.into_iter().collect(),
        unpriced_steps,
        steps,
    })
}

/// The run's cost in one sentence, for the text report, the Markdown and the screen's help:
/// `$0.0018, as the trace records it (2 steps)`, `~$0.020, estimated from tokens at the prices of
/// 2025-11-15 (3 steps)`, and what was left out.
pub fn summary(c: &CostSection) -> String {
    let counted = c.steps.iter().filter(|s| s.in_total).count();
    let steps = crate::analysis::count::counted(counted, "step", "steps");
    let mut out = match (c.total_from, c.source) {
        (TotalFrom::Steps, _) if counted == 0 => "unknown: no step records a cost".to_owned(),
        (TotalFrom::Run, _) => format!(
            "{}, as the run records it (its steps record {})",
            format_usd(c.total_usd, false),
            format_usd(c.recorded_usd, false)
        ),
        (TotalFrom::Steps, CostSource::Recorded) => format!(
            "{}, as the trace records it ({steps})",
            format_usd(c.total_usd, false)
        ),
        (TotalFrom::Steps, CostSource::Estimated) if c.recorded_usd > 0.0 => format!(
            "{}: {} recorded and {} estimated from tokens at the prices of {} ({steps})",
            format_usd(c.total_usd, true),
            format_usd(c.recorded_usd, false),
            format_usd(c.estimated_usd, true),
            c.prices_as_of
        ),
        (TotalFrom::Steps, CostSource::Estimated) => format!(
            "{}, estimated from tokens at the prices of {} ({steps})",
            format_usd(c.total_usd, true),
            c.prices_as_of
        ),
    };
    if !c.unpriced_models.is_empty() {
        out.push_str(&format!(
            "; left out: calls to {} (no price known; [prices] in tdn.toml adds one)",
            c.unpriced_models.join(", ")
        ));
    }
    if c.unpriced_steps > 0 {
        out.push_str(&format!(
            "; left out: {} with tokens and no model named",
            crate::analysis::count::counted(c.unpriced_steps, "step", "steps")
        ));
    }
    out
}

/// Most model names listed as unpriced (a hostile run could name a new one per step).
const MAX_UNPRICED: usize = 20;

/// Marks `in_total = false` on every costed step that has a costed step nested inside it. Steps
/// come in run order and a parent is always an earlier step, so one backward pass carries "has a
/// costed descendant" up the tree.
fn mark_nested(run: &Run, steps: &mut [StepCost]) {
    let n = run.steps.len();
    let mut costed = vec![false; n];
    for s in steps.iter() {
        if let Some(c) = costed.get_mut(s.index) {
            *c = true;
        }
    }
    let mut below = vec![false; n];
    for i in (0..n).rev() {
        let Some(step) = run.steps.get(i) else {
            continue;
        };
        if (costed[i] || below[i])
            && let Some(p) = step
                .parent
                .as_ref()
                .and_then(|p| run.step_index(p.as_str()))
            && p < i
        {
            below[p] = true;
        }
    }
    for s in steps.iter_mut() {
        s.in_total = !below.get(s.index).copied().unwrap_or(false);
    }
}

/// A dollar amount as people read it: `$1.23`, `$0.0045`, `$0.000075` (two significant digits
/// below a dollar), with `~` before an estimate.
pub fn format_usd(usd: f64, estimated: bool) -> String {
    let mark = if estimated { "~" } else { "" };
    if !usd.is_finite() || usd <= 0.0 {
        return format!("{mark}$0");
    }
    let text = if usd >= 100.0 {
        format!("{usd:.0}")
    } else if usd >= 1.0 {
        format!("{usd:.2}")
    } else if usd < 0.000_001 {
        return format!("{mark}<$0.000001");
    } else {
        // Two significant digits: the decimals up to the first non-zero one, plus one.
        let decimals = (-usd.log10()).floor() as usize + 2;
        let t = format!("{usd:.decimals$}");
        let t = t.trim_end_matches('0');
        t.trim_end_matches('.').to_owned()
    };
    format!("{mark}${text}")
}

#[cfg(test)]
mod tests;

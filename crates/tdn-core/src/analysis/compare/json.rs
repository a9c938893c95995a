//! The JSON of `diff --json` (docs/compare.md):
//! `{"first_divergence": {"good", "bad", "what"} | null, "aligned": [...], "differences": [...]}`,
//! steps named by id and 0-based position.

use super::{Comparison, Difference, parents};
use crate::analysis::model::Run;
use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};

/// A comparison written as JSON, with the step ids read from the two runs compared.
pub struct ComparisonJson<'a> {
    cmp: &'a Comparison,
    good: &'a Run,
    bad: &'a Run,
}

impl<'a> ComparisonJson<'a> {
    /// The JSON view of `cmp`, made from `good` and `bad`.
    pub fn new(cmp: &'a Comparison, good: &'a Run, bad: &'a Run) -> Self {
        ComparisonJson { cmp, good, bad }
    }
}

/// A step: its id and 0-based position.
#[derive(Serialize)]
struct StepRef<'a> {
    step: &'a str,
    index: usize,
}

fn step_ref(run: &Run, index: Option<usize>) -> Option<StepRef<'_>> {
    let i = index?;
    run.steps.get(i).map(|s| StepRef {
        step: s.id.as_str(),
        index: i,
    })
}

/// The divergence's step with the steps that hold it, outermost first.
#[derive(Serialize)]
struct Placed<'a> {
    step: &'a str,
    index: usize,
    parents: Vec<StepRef<'a>>,
}

fn placed(run: &Run, index: Option<usize>) -> Option<Placed<'_>> {
    let at = step_ref(run, index)?;
    Some(Placed {
        step: at.step,
        index: at.index,
        parents: parents(run, at.index)
            .into_iter()
            .filter_map(|p| step_ref(run, Some(p)))
            .collect(),
    })
}

/// What differs, without the steps (the divergence names them).
#[derive(Serialize)]
struct What<'a> {
    row: Option<usize>,
    change: &'static str,
    class: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    good_value: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bad_value: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    facts: bool,
    text: String,
}

fn what(d: &Difference) -> What<'_> {
    What {
        row: d.row,
        change: d.change.as_str(),
        class: d.class.as_str(),
        tool: d.tool.as_deref(),
        key: d.key.as_deref(),
        good_value: d.good_value.as_deref(),
        bad_value: d.bad_value.as_deref(),
        facts: d.facts,
        text: d.sentence(),
    }
}

#[derive(Serialize)]
struct Divergence<'a> {
    good: Option<Placed<'a>>,
    bad: Option<Placed<'a>>,
    what: What<'a>,
}

#[derive(Serialize)]
struct AlignedRow<'a> {
    good: Option<StepRef<'a>>,
    bad: Option<StepRef<'a>>,
    #[serde(rename = "match")]
    matched: &'static str,
}

#[derive(Serialize)]
struct DifferenceJson<'a> {
    good: Option<StepRef<'a>>,
    bad: Option<StepRef<'a>>,
    #[serde(flatten)]
    what: What<'a>,
}

/// A sequence written one item at a time (a 100,000-step comparison is never held as JSON
/// values).
struct Lazy<I>(std::cell::RefCell<Option<I>>);

impl<I: Iterator<Item = T>, T: Serialize> Serialize for Lazy<I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        if let Some(items) = self.0.borrow_mut().take() {
            for item in items {
                seq.serialize_element(&item)?;
            }
        }
        seq.end()
    }
}

fn lazy<I>(items: I) -> Lazy<I> {
    Lazy(std::cell::RefCell::new(Some(items)))
}

impl Serialize for ComparisonJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (cmp, good, bad) = (self.cmp, self.good, self.bad);
        let first = cmp.first_divergence.as_ref().and_then(|f| {
            let d = cmp.differences.get(f.what)?;
            Some(Divergence {
                good: placed(good, f.good),
                bad: placed(bad, f.bad),
                what: what(d),
            })
        });
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("first_divergence", &first)?;
        m.serialize_entry(
            "aligned",
            &lazy(cmp.rows.iter().map(|r| AlignedRow {
                good: step_ref(good, r.good),
                bad: step_ref(bad, r.bad),
                matched: r.matched.as_str(),
            })),
        )?;
        m.serialize_entry(
            "differences",
            &lazy(cmp.differences.iter().map(|d| DifferenceJson {
                good: step_ref(good, d.good),
                bad: step_ref(bad, d.bad),
                what: what(d),
            })),
        )?;
        m.end()
    }
}

//! A run's context units, read in two steps (issue 11): everything but `produced_by` from the
//! run's own fields ([`read_units`]), which needs no step and so is read beside the steps when
//! the file is read in blocks; then `produced_by`, checked against the steps once all are known
//! ([`PendingUnits::resolve`]). The units and the warnings, in their order, are those one pass
//! over the finished run would give.

use super::{count, ignored, leftover};
use crate::analysis::load::error::{json_type, quoted};
use crate::analysis::load::warning::Warning;
use crate::analysis::model::{ContextUnit, StepId, UnitId};
use hashbrown::{HashMap, HashSet};
use serde_json::{Map, Value};

/// The context units read so far: each unit's `produced_by` is still to check.
#[derive(Debug, Default)]
pub(super) struct PendingUnits {
    /// The units kept, in order, none with a producer yet.
    units: Vec<ContextUnit>,
    /// Per unit of `units`: the position of its item in the array, and its `produced_by` as
    /// given (`None` when absent or null).
    produced_by: Vec<(usize, Option<Value>)>,
    /// The warnings so far, in order, each with the position of the item it is about (0 for
    /// one about the array as a whole, when there are no units).
    warnings: Vec<(usize, Warning)>,
}

/// Takes `context_units` out of the run's fields and reads every unit but its producer.
pub(super) fn read_units(obj: &mut Map<String, Value>) -> PendingUnits {
    let mut read = PendingUnits::default();
    let Some(v) = obj.remove("context_units") else {
        return read;
    };
    let Value::Array(items) = v else {
        if !v.is_null() {
            read.warnings.push((
                0,
                Warning::run(
                    Some("context_units"),
                    ignored("context_units", &v, "an array"),
                ),
            ));
        }
        return read;
    };
    read.units.reserve(items.len());
    read.produced_by.reserve(items.len());
    let mut seen: HashSet<String> = HashSet::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let mut warn = |text: String| {
            read.warnings
                .push((i, Warning::run(Some("context_units"), text)));
        };
        let Value::Object(mut u) = item else {
            warn(format!(
                "context_units[{i}] is {}, not an object; it was ignored",
                json_type(&item)
            ));
            continue;
        };
        let id = match u.remove("id") {
            Some(Value::String(s)) => s,
            _ => {
                warn(format!(
                    "context_units[{i}] has no string \"id\"; it was ignored"
                ));
                continue;
            }
        };
        if !seen.insert(id.clone()) {
            warn(repeated(i, &id));
            continue;
        }
        let kind = match u.remove("kind") {
            Some(Value::String(s)) => s,
            _ => {
                warn(format!(
                    "context unit '{}' has no string \"kind\"; it is treated as kind 'unknown'",
                    quoted(&id)
                ));
                "unknown".to_owned()
            }
        };
        let text = match u.remove("text") {
            Some(Value::String(s)) => s,
            _ => {
                warn(format!(
                    "context unit '{}' has no string \"text\"; its text is taken as empty",
                    quoted(&id)
                ));
                String::new()
            }
        };
        let tokens = match u.remove("tokens") {
            None | Some(Value::Null) => None,
            Some(v) => {
                let n = count(&v);
                if n.is_none() {
                    warn(format!(
                        "context unit '{}': \"tokens\" is not a non-negative integer; it was ignored",
                        quoted(&id)
                    ));
                }
                n
            }
        };
        let at = match u.remove("at") {
            None | Some(Value::Null) => Vec::new(),
            Some(v) => super::messages::read_at(v, &id, &mut warn),
        };
        let by = match u.remove("produced_by") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        };
        read.produced_by.push((i, by));
        read.units.push(ContextUnit {
            id: UnitId(id),
            kind,
            text,
            tokens,
            produced_by: None,
            at,
            extra: leftover(u),
        });
    }
    read
}

/// The warning on the unit at `i` that repeats the id of one before it.
fn repeated(i: usize, id: &str) -> String {
    format!(
        "context_units[{i}] repeats the unit id '{}'; the first unit with that id is used",
        quoted(id)
    )
}

impl PendingUnits {
    /// Units an importer made in the run model (`produced_by` still to check), as
    /// [`read_units`] gives them from the same units written as run JSON.
    pub(super) fn given(units: Vec<ContextUnit>) -> PendingUnits {
        let mut read = PendingUnits::default();
        read.units.reserve(units.len());
        read.produced_by.reserve(units.len());
        let mut seen: HashSet<String> = HashSet::with_capacity(units.len());
        for (i, mut unit) in units.into_iter().enumerate() {
            if !seen.insert(unit.id.0.clone()) {
                read.warnings.push((
                    i,
                    Warning::run(Some("context_units"), repeated(i, &unit.id.0)),
                ));
                continue;
            }
            let by = unit.produced_by.take().map(|s| Value::String(s.0));
            read.produced_by.push((i, by));
            read.units.push(unit);
        }
        read
    }

    /// The units, each with its producer when `produced_by` names a step of `steps`; the
    /// warnings go onto `w` in item order, a unit's own before its producer's.
    pub(super) fn resolve(
        self,
        steps: &HashMap<String, usize>,
        w: &mut Vec<Warning>,
    ) -> Vec<ContextUnit> {
        let PendingUnits {
            mut units,
            produced_by,
            warnings,
        } = self;
        let mut earlier = warnings.into_iter().peekable();
        for (unit, (item, by)) in units.iter_mut().zip(produced_by) {
            while let Some((_, warning)) = earlier.next_if(|(at, _)| *at <= item) {
                w.push(warning);
            }
            match by {
                None => {}
                Some(Value::String(s)) if steps.contains_key(&s) => {
                    unit.produced_by = Some(StepId(s));
                }
                Some(other) => w.push(Warning::run(
                    Some("context_units"),
                    format!(
                        "context unit '{}': \"produced_by\" names no step of this run ({}); the reference was dropped",
                        quoted(&unit.id.0),
                        match &other {
                            Value::String(s) => format!("'{}'", quoted(s)),
                            v => json_type(v).to_owned(),
                        }
                    ),
                )),
            }
        }
        w.extend(earlier.map(|(_, warning)| warning));
        units
    }
}

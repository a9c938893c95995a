//! Memory consistency (docs/how-it-decides.md, "Detect"): a memory read that returns something
//! other than what the run last wrote to that key. Values are compared as JSON with object keys
//! in any order and strings trimmed. A read with no earlier write in the run is not judged.
//! No I/O.

use super::say::{quote, step};
use super::{Category, Detector, DetectorId, Facts, Finding, Nature};
use crate::analysis::model::Json;
use crate::analysis::model::{StepKind, value_text};
use crate::analysis::params::MEMORY_MISMATCH;
use hashbrown::HashMap;

/// A memory read that differs from what was written.
pub struct MemoryConsistency;

fn same(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::String(x), Json::String(y)) => x.trim() == y.trim(),
        _ => a == b,
    }
}

impl Detector for MemoryConsistency {
    fn id(&self) -> DetectorId {
        DetectorId::MemoryConsistency
    }

    fn doc(&self) -> &'static str {
        "A memory read that returns something different from what was written."
    }

    fn detect(&self, f: &Facts<'_>) -> Vec<Finding> {
        let run = f.run;
        let mut written: HashMap<&str, (usize, &Json)> = HashMap::new();
        let mut out = Vec::new();
        for (i, s) in run.steps.iter().enumerate() {
            let Some(m) = &s.memory else { continue };
            match s.kind {
                StepKind::MemoryWrite if !s.failed() => {
                    written.insert(m.key.as_str(), (i, &m.value));
                }
                StepKind::MemoryRead => {
                    let Some(&(w, value)) = written.get(m.key.as_str()) else {
                        continue;
                    };
                    if same(value, &m.value) {
                        continue;
                    }
                    let got = if m.value.is_null() {
                        "nothing".to_owned()
                    } else {
                        quote(&value_text(&m.value))
                    };
                    let mut fi = Finding::new(
                        i,
                        Category::MemoryMismatch,
                        DetectorId::MemoryConsistency,
                        MEMORY_MISMATCH,
                        Nature::Suspect,
                        format!(
                            "memory {} read back differently than written",
                            quote(&m.key)
                        ),
                    )
                    .because(format!(
                        "{} read {} and got {got}, but {} wrote {}",
                        step(run, i),
                        quote(&m.key),
                        step(run, w),
                        quote(&value_text(value))
                    ));
                    fi.about_read = true;
                    out.push(fi);
                }
                _ => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::tests_support::facts_for;
    use crate::analysis::testutil::RunBuilder;
    use serde_json::json;

    #[test]
    fn a_read_that_differs_from_the_last_write_is_flagged() {
        let run = RunBuilder::failed()
            .mem_write("s1", "seat", "aisle")
            .mem_read("s2", "seat", "window")
            .build();
        let found = facts_for(&run, |f| MemoryConsistency.detect(f));
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].step, found[0].category),
            (1, Category::MemoryMismatch)
        );
        assert!(
            found[0].evidence[0].contains("got 'window', but step 's1' (position 1) wrote 'aisle'")
        );
    }

    #[test]
    fn equal_values_in_any_key_order_and_unwritten_keys_are_fine() {
        let run = RunBuilder::failed()
            .mem_write("s1", "prefs", json!({"a": 1, "b": " x "}))
            .mem_read("s2", "prefs", json!({"b": " x ", "a": 1}))
            .mem_read("s3", "other", "anything")
            .mem_write("s4", "seat", "aisle ")
            .mem_read("s5", "seat", "aisle")
            .build();
        assert!(facts_for(&run, |f| MemoryConsistency.detect(f)).is_empty());
    }
}

//! Test doubles for the analysis: [`RunBuilder`] builds a [`Run`] step by step without JSON.
//! Compiled only for tests; never used by the program.

use crate::analysis::model::Json;
use crate::analysis::model::{
    ContextUnit, Decision, DecisionOption, Document, Limits, MemoryOp, ModelInfo, Run, RunStatus,
    Step, StepContext, StepId, StepKind, Tool, ToolCall, UnitId, Usage,
};
use serde_json::Value;

/// The sample runs shipped with the project (`sample-runs/*.json`), sorted by name.
pub fn sample_runs() -> Vec<std::path::PathBuf> {
    let dir =
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("sample-runs");
    let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
}

/// The next number of a xorshift sequence (Marsaglia's 13, 7, 17), updating `seed`: a fixed,
/// repeatable spread of inputs for a test that walks many cases.
pub fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// Builds a run for a unit test.
pub struct RunBuilder {
    run: Run,
}

/// A retrieved document.
pub fn doc(id: &str, text: &str, outdated: bool) -> Document {
    Document {
        id: Some(id.to_owned()),
        text: text.to_owned(),
        source: None,
        outdated,
    }
}

impl RunBuilder {
    /// A run with this status and id `test`.
    pub fn new(status: RunStatus) -> Self {
        RunBuilder {
            run: Run::new("test", status),
        }
    }

    /// A failed run.
    pub fn failed() -> Self {
        Self::new(RunStatus::Failed)
    }

    /// A succeeded run.
    pub fn succeeded() -> Self {
        Self::new(RunStatus::Succeeded)
    }

    /// Sets the run-level error.
    pub fn run_error(mut self, e: &str) -> Self {
        self.run.error = Some(e.to_owned());
        self
    }

    /// Sets the task.
    pub fn task(mut self, t: &str) -> Self {
        self.run.task = Some(t.to_owned());
        self
    }

    /// Sets the final answer.
    pub fn answer(mut self, t: &str) -> Self {
        self.run.final_answer = Some(t.to_owned());
        self
    }

    /// Sets the step budget.
    pub fn max_steps(mut self, n: u64) -> Self {
        self.run.limits = Some(Limits { max_steps: Some(n) });
        self
    }

    /// Sets the model's context window.
    pub fn window(mut self, n: u64) -> Self {
        self.run.model = Some(ModelInfo {
            name: None,
            context_window: Some(n),
        });
        self
    }

    /// Offers a tool.
    pub fn tool_def(mut self, name: &str, description: &str, params: Value, mutates: bool) -> Self {
        self.run.tools.push(Tool {
            name: name.to_owned(),
            description: (!description.is_empty()).then(|| description.to_owned()),
            parameters: (!params.is_null()).then_some(params),
            mutates,
        });
        self
    }

    /// Adds a context unit.
    pub fn unit(mut self, id: &str, kind: &str, text: &str, produced_by: Option<&str>) -> Self {
        self.run.context_units.push(ContextUnit {
            id: UnitId(id.to_owned()),
            kind: kind.to_owned(),
            text: text.to_owned(),
            tokens: None,
            produced_by: produced_by.map(StepId::from),
            at: Vec::new(),
            extra: Default::default(),
        });
        self
    }

    /// Adds any step.
    pub fn step(mut self, s: Step) -> Self {
        self.run.steps.push(s);
        self
    }

    /// Changes the last step.
    pub fn with(mut self, f: impl FnOnce(&mut Step)) -> Self {
        if let Some(s) = self.run.steps.last_mut() {
            f(s);
        }
        self
    }

    /// A user message.
    pub fn user(self, id: &str, text: &str) -> Self {
        let mut s = Step::new(id, StepKind::User);
        s.output = Some(Json::from(text));
        self.step(s)
    }

    /// A model step with this output.
    pub fn llm(self, id: &str, output: impl Into<Value>) -> Self {
        let mut s = Step::new(id, StepKind::Llm);
        s.output = Some(Json::from(output.into()));
        self.step(s)
    }

    /// A model step with input and output.
    pub fn llm_io(self, id: &str, input: impl Into<Value>, output: impl Into<Value>) -> Self {
        let mut s = Step::new(id, StepKind::Llm);
        s.input = Some(Json::from(input.into()));
        s.output = Some(Json::from(output.into()));
        self.step(s)
    }

    /// A model step with recorded context and input tokens.
    pub fn llm_ctx(self, id: &str, available: &[&str], sent: &[&str], output: &str) -> Self {
        let mut s = Step::new(id, StepKind::Llm);
        s.output = Some(Json::from(output));
        s.context = Some(Box::new(StepContext {
            available: Some(available.iter().map(|u| UnitId::from(*u)).collect()),
            sent: sent.iter().map(|u| UnitId::from(*u)).collect(),
        }));
        self.step(s)
    }

    /// Sets the last step's input tokens.
    pub fn input_tokens(self, n: u64) -> Self {
        self.with(|s| {
            s.extras_mut().usage = Some(Usage {
                input_tokens: Some(n),
                ..Usage::default()
            })
        })
    }

    /// A tool call that succeeded.
    pub fn tool_ok(self, id: &str, name: &str, args: Value, output: impl Into<Value>) -> Self {
        let mut s = Step::new(id, StepKind::Tool);
        s.tool = Some(Box::new(ToolCall {
            name: name.to_owned(),
            arguments: Json::from(args),
            call_id: None,
        }));
        s.output = Some(Json::from(output.into()));
        self.step(s)
    }

    /// A tool call that failed.
    pub fn tool_err(self, id: &str, name: &str, args: Value, error: &str) -> Self {
        let mut s = Step::new(id, StepKind::Tool);
        s.tool = Some(Box::new(ToolCall {
            name: name.to_owned(),
            arguments: Json::from(args),
            call_id: None,
        }));
        s.error = Some(error.to_owned());
        self.step(s)
    }

    /// A retrieval.
    pub fn retrieval(self, id: &str, query: &str, docs: Vec<Document>) -> Self {
        let mut s = Step::new(id, StepKind::Retrieval);
        s.input = Some(Json::from(query));
        s.documents = Some(docs);
        self.step(s)
    }

    /// A memory write.
    pub fn mem_write(self, id: &str, key: &str, value: impl Into<Value>) -> Self {
        let mut s = Step::new(id, StepKind::MemoryWrite);
        s.memory = Some(Box::new(MemoryOp {
            key: key.to_owned(),
            value: Json::from(value.into()),
        }));
        self.step(s)
    }

    /// A memory read.
    pub fn mem_read(self, id: &str, key: &str, value: impl Into<Value>) -> Self {
        let mut s = Step::new(id, StepKind::MemoryRead);
        s.memory = Some(Box::new(MemoryOp {
            key: key.to_owned(),
            value: Json::from(value.into()),
        }));
        self.step(s)
    }

    /// A decision: `options` are `(id, required step ids)`.
    pub fn decision(self, id: &str, chosen: &str, options: &[(&str, &[&str])]) -> Self {
        let mut s = Step::new(id, StepKind::Decision);
        s.decision = Some(Box::new(Decision {
            chosen: chosen.to_owned(),
            options: options
                .iter()
                .map(|(o, req)| DecisionOption {
                    id: (*o).to_owned(),
                    requires: req.iter().map(|r| StepId::from(*r)).collect(),
                })
                .collect(),
        }));
        self.step(s)
    }

    /// The run, indexed.
    pub fn build(mut self) -> Run {
        self.run.reindex();
        self.run
    }
}

/// How big the arbitrary JSON values of [`json_tree`] grow: proptest's `prop_recursive`
/// limits (levels, total nodes, items per collection) and the lengths of arrays and objects.
pub struct TreeShape {
    /// Levels of nesting at most.
    pub depth: u32,
    /// Nodes in one value, about.
    pub size: u32,
    /// Items per collection proptest aims for.
    pub branch: u32,
    /// Items of one array.
    pub array: std::ops::Range<usize>,
    /// Entries of one object.
    pub object: std::ops::Range<usize>,
}

/// Arbitrary JSON values for property tests: `leaf` values nested in arrays and in objects
/// keyed by what `key()` generates, as `shape` allows. Each test chooses its own leaves (the numbers and
/// strings its round trip needs) and keys.
pub fn json_tree<L, K>(
    leaf: L,
    key: fn() -> K,
    shape: TreeShape,
) -> impl proptest::strategy::Strategy<Value = Value>
where
    L: proptest::strategy::Strategy<Value = Value> + 'static,
    K: proptest::strategy::Strategy<Value = String> + 'static,
{
    use proptest::prelude::*;
    let TreeShape {
        depth,
        size,
        branch,
        array,
        object,
    } = shape;
    leaf.prop_recursive(depth, size, branch, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), array.clone()).prop_map(Value::Array),
            prop::collection::vec((key(), inner), object.clone())
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

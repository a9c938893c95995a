//! A span tree's task, final answer and status, read from its steps once they are built.
//!
//! - **Task**: the input of the first root or agent step that states one (`run_text::task_text`:
//!   `{"task": ...}` as smolagents records `CodeAgent.run`, `{"input": ...}` as LangChain does, a
//!   list of messages); else a model input's user message that opens with `New task:` (the
//!   smolagents prompt), the text after it; else the last user message of the first model call.
//! - **Final answer**: the framework's own final-answer call (a `final_answer`, `final_result` or
//!   `finish` tool step, or a model's call to one) made by a top-level agent (one with no agent
//!   above it), not by an agent it manages; else the output of the last root that has one, then
//!   of the last top-level agent; else the literal argument of `final_answer(...)` in the code of
//!   the last top-level agent's last model output (smolagents' CodeAgent); else the answer of the
//!   last model output. Several top-level agents are stages of a pipeline: the last speaks last.
//!   Serialised structures are never taken (`run_text::prose`).
//! - **Status**: `error` with the root's error when a root step failed; else what a root's output
//!   says (`{"success": true}`, `import::outcome`); else `failed`, assumed, with a warning.
//!
//! Pure; linear in the number of steps.

use super::container::Facts;
use crate::analysis::import::built::{Payload, StepStore};
use crate::analysis::import::chat;
use crate::analysis::import::run_text::{answer_text, call_answer, code_final_answer, task_text};
use crate::analysis::model::FINAL_ANSWER_TOOLS;
use serde_json::Value;
use std::collections::HashMap;

/// The prefix smolagents puts before the task in the prompt it sends the model.
const NEW_TASK: &str = "New task:";

pub use crate::analysis::import::outcome::status_guess;

/// The built steps and what is known about each.
pub struct View<'a, S: ?Sized> {
    /// The steps, in run order.
    pub steps: &'a S,
    /// Their kinds and parents.
    pub facts: &'a [Facts],
    /// What was read of the inputs taken out where their steps were built.
    pub early: &'a EarlyReads,
}

/// What the task needs of a model call's input, read where the call's step is built, before the
/// input is replaced by the call's messages (issue 28: read then, the input is never held in the
/// run model only to be read back). Only what [`View`] can ask is read: a root call's task, and
/// the task and the `New task:` text of each call until one states it (the view's searches stop
/// at the first that does).
#[derive(Debug, Default)]
pub struct EarlyReads {
    by_step: HashMap<usize, InputRead>,
    task_found: bool,
    new_task_found: bool,
}

#[derive(Debug, Default)]
struct InputRead {
    task: Option<String>,
    new_task: Option<String>,
}

impl EarlyReads {
    /// Reads the input of the model call at `position` (a root when `root`), called in run order.
    pub fn read(&mut self, position: usize, input: &Value, root: bool) {
        let mut read = InputRead::default();
        if root || !self.task_found {
            read.task = task_text(input);
            self.task_found |= read.task.is_some();
        }
        if !self.new_task_found {
            read.new_task = new_task(input);
            self.new_task_found |= read.new_task.is_some();
        }
        self.by_step.insert(position, read);
    }
}

impl<S: StepStore + ?Sized> View<'_, S> {
    fn kind(&self, i: usize) -> &str {
        self.facts.get(i).map_or("event", |f| f.kind)
    }

    fn is_root(&self, i: usize) -> bool {
        self.facts.get(i).is_some_and(|f| f.parent.is_none())
    }

    /// What the first root output that holds a success flag says (see
    /// [`crate::analysis::import::outcome::success_flag`]).
    pub fn root_flag(&self) -> Option<crate::analysis::import::outcome::Said> {
        (0..self.steps.len())
            .filter(|&i| self.is_root(i))
            .filter_map(|i| self.steps.payload(i, Payload::Output))
            .find_map(|o| crate::analysis::import::outcome::success_flag(&o))
    }

    /// The agent steps with no agent above them, in run order.
    fn top_agents(&self, scopes: &[Option<usize>]) -> Vec<usize> {
        self.facts
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                f.kind == "agent"
                    && f.parent
                        .and_then(|p| scopes.get(p).copied().flatten())
                        .is_none()
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// For each step, the nearest agent step at or above it.
    fn scopes(&self) -> Vec<Option<usize>> {
        let mut out: Vec<Option<usize>> = Vec::with_capacity(self.facts.len());
        for (i, f) in self.facts.iter().enumerate() {
            let s = if f.kind == "agent" {
                Some(i)
            } else {
                f.parent.and_then(|p| out.get(p).copied().flatten())
            };
            out.push(s);
        }
        out
    }

    /// See the module documentation.
    #[cfg(test)]
    pub fn task(&self) -> Option<String> {
        self.stated_task().or_else(|| self.model_task())
    }

    /// What `read` makes of the input of the step at `i`, or what was read of it early.
    fn input_read(
        &self,
        i: usize,
        early: impl FnOnce(&InputRead) -> Option<String>,
        read: impl FnOnce(&Value) -> Option<String>,
    ) -> Option<String> {
        match self.early.by_step.get(&i) {
            Some(r) => early(r),
            None => self.steps.payload(i, Payload::Input).and_then(|v| read(&v)),
        }
    }

    fn task_of(&self, i: usize) -> Option<String> {
        self.input_read(i, |r| r.task.clone(), task_text)
    }

    /// The task a root or agent step's input states, else the text after `New task:` in a model
    /// input (what the user asked, as the trace states it).
    pub fn stated_task(&self) -> Option<String> {
        let from_top = (0..self.steps.len())
            .filter(|&i| self.is_root(i) || self.kind(i) == "agent")
            .find_map(|i| self.task_of(i));
        from_top.or_else(|| {
            self.model_steps()
                .find_map(|i| self.input_read(i, |r| r.new_task.clone(), new_task))
        })
    }

    /// The last user message of the first model call that states one: the last resort, which
    /// may be a filled prompt template (the units pass cuts the documents out first).
    pub fn model_task(&self) -> Option<String> {
        self.model_steps()
            .find_map(|i| self.task_of(i))
            .map(|t| crate::analysis::import::run_text::labelled_task(&t).unwrap_or(t))
    }

    /// The positions of the model calls.
    fn model_steps(&self) -> impl DoubleEndedIterator<Item = usize> {
        (0..self.steps.len()).filter(|&i| self.kind(i) == "llm")
    }

    /// See the module documentation.
    pub fn final_answer(&self) -> Option<String> {
        let scopes = self.scopes();
        let tops = self.top_agents(&scopes);
        // The last of several top-level agents (a pipeline) speaks last.
        let outer = tops.last().copied();
        let mut is_top = vec![false; self.facts.len()];
        for &t in &tops {
            if let Some(slot) = is_top.get_mut(t) {
                *slot = true;
            }
        }
        let scope_of = |i: usize| scopes.get(i).copied().flatten();
        let in_top = |i: usize| scope_of(i).is_none_or(|s| is_top.get(s).copied().unwrap_or(false));
        let in_outer = |i: usize| scope_of(i) == outer;
        let call = (0..self.steps.len())
            .rev()
            .filter(|&i| in_top(i))
            .find_map(|i| match self.kind(i) {
                "tool" => {
                    let (name, _) = self.steps.tool(i)?;
                    FINAL_ANSWER_TOOLS
                        .contains(&name)
                        .then(|| {
                            self.steps
                                .payload(i, Payload::Arguments)
                                .and_then(|a| call_answer(&a))
                        })
                        .flatten()
                }
                "llm" => self.steps.payload(i, Payload::Output).and_then(|o| {
                    chat::message_calls(&o)
                        .iter()
                        .rev()
                        .find(|c| FINAL_ANSWER_TOOLS.contains(&c.name.as_str()))
                        .and_then(|c| call_answer(&c.arguments))
                }),
                _ => None,
            });
        let output = |i: usize| {
            self.steps
                .payload(i, Payload::Output)
                .and_then(|o| answer_text(&o))
        };
        let top = || {
            (0..self.steps.len())
                .rev()
                .filter(|&i| self.is_root(i))
                .find_map(output)
                .or_else(|| tops.iter().rev().find_map(|&i| output(i)))
        };
        let last_text = |scoped: bool| {
            self.model_steps()
                .rev()
                .filter(|&i| !scoped || in_outer(i))
                .find_map(|i| {
                    self.steps
                        .payload(i, Payload::Output)
                        .and_then(|o| chat::message_text(&o))
                })
        };
        call.or_else(top)
            .or_else(|| last_text(true).and_then(|t| code_final_answer(&t)))
            .or_else(|| {
                self.model_steps().rev().find_map(|i| {
                    self.steps
                        .payload(i, Payload::Output)
                        .and_then(|o| answer_text(&o))
                })
            })
    }
}

/// The task a smolagents prompt carries: the text after `New task:` in a user message.
fn new_task(input: &Value) -> Option<String> {
    let msgs = input.as_array()?;
    msgs.iter()
        .filter(|m| chat::message_role(m) == Some("user"))
        .filter_map(chat::message_text)
        .find_map(|t| {
            let rest = t.trim_start().strip_prefix(NEW_TASK)?;
            chat::non_empty(rest)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::import::built::JsonSteps;
    use serde_json::{Map, json};

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn facts(list: &[(&'static str, Option<usize>)]) -> Vec<Facts> {
        list.iter()
            .map(|&(kind, parent)| Facts {
                kind,
                stated: true,
                wrapper: false,
                parent,
            })
            .collect()
    }

    #[test]
    fn the_outermost_agent_s_final_answer_call_wins_over_a_managed_agent_s() {
        let mut steps = [
            obj(json!({"name": "main"})),
            obj(json!({"input": {"task": "Which actor?"}})),
            obj(json!({"input": {"task": "search for the actor"}})),
            obj(json!({"tool": {"name": "final_answer", "arguments": {"answer": "a page"}}})),
            obj(json!({"output": "Thought: done.\nCode:\n```py\nfinal_answer(\"Marek\")\n```"})),
            obj(json!({"tool": {"name": "final_answer", "arguments": {"answer": "Marek"}}})),
            obj(json!({"output": "post-processing text"})),
        ];
        let kinds = |fifth: &'static str| {
            facts(&[
                ("event", None),
                ("agent", Some(0)),
                ("agent", Some(1)),
                ("tool", Some(2)),
                ("llm", Some(1)),
                (fifth, Some(1)),
                ("llm", Some(0)),
            ])
        };
        let store = JsonSteps::new(&mut steps);
        let f = kinds("tool");
        let view = View {
            steps: &store,
            facts: &f,
            early: &EarlyReads::default(),
        };
        assert_eq!(view.task().as_deref(), Some("Which actor?"));
        assert_eq!(view.final_answer().as_deref(), Some("Marek"));
        // Without the outer call, the literal argument in the outer agent's last code.
        let f = kinds("event");
        let view = View {
            steps: &store,
            facts: &f,
            early: &EarlyReads::default(),
        };
        assert_eq!(view.final_answer().as_deref(), Some("Marek"));
    }

    #[test]
    fn a_smolagents_prompt_gives_the_task_after_new_task() {
        let mut steps = [obj(json!({"input": [
            {"role": "system", "content": "You are an expert."},
            {"role": "user", "content": "New task:\nwhat are the AI trends in 2025"}]}))];
        let store = JsonSteps::new(&mut steps);
        let f = facts(&[("llm", Some(9))]);
        let view = View {
            steps: &store,
            facts: &f,
            early: &EarlyReads::default(),
        };
        assert_eq!(
            view.task().as_deref(),
            Some("what are the AI trends in 2025")
        );
    }
}

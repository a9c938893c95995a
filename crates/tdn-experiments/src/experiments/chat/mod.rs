//! The built-in chat runner (`tdn-tui runner chat`, docs/experiments.md): instead of re-running
//! the user's agent, it re-sends the run's recorded model call that produced the answer to an
//! OpenAI-compatible chat endpoint, with the experiment's unit cut out of its messages (an
//! ablation), put back (a restoration), or with what a step produced replaced by a patch (a
//! replay with a patch), and answers with the reply in the runner protocol. What it proves is
//! about that call: its output changed, not the whole run's answer; it says so with the
//! protocol's `replayed_call`, which the verdicts read.
//!
//! [`recorded`] reads the run (the one place the chat runner reads one), [`rebuild`] edits the
//! messages, [`endpoint`] does the HTTP. The command line reads the spec and the environment and
//! prints; nothing here prints.

pub mod endpoint;
pub mod rebuild;
pub mod recorded;

use crate::analysis::model::inert_line;
use crate::experiments::spec::{ExperimentKind, ExperimentSpec};
use std::time::Duration;

/// Why the chat runner has no answer: one line for people. The key never appears in one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChatError {
    /// Nothing was sent: the setup, the spec or the run keeps it from replaying (exit 2).
    #[error("{0}")]
    Setup(String),
    /// The endpoint could not be reached, refused, or answered with something unreadable (exit 1).
    #[error("{0}")]
    Endpoint(String),
}

/// The variables the chat runner reads.
pub const URL_VAR: &str = "TDN_CHAT_URL";
/// The key, else [`FALLBACK_KEY_VAR`].
pub const KEY_VAR: &str = "TDN_CHAT_KEY";
/// The key when [`KEY_VAR`] is not set.
pub const FALLBACK_KEY_VAR: &str = "OPENAI_API_KEY";
/// The model, instead of the recorded call's.
pub const MODEL_VAR: &str = "TDN_CHAT_MODEL";
/// The temperature, instead of the recorded call's.
pub const TEMPERATURE_VAR: &str = "TDN_CHAT_TEMPERATURE";
/// The sample's time-out in seconds, set by tdn-tui for every runner.
pub const TIMEOUT_VAR: &str = "TDN_TIMEOUT_S";

/// The time-out when the runner is started by hand (the runner's default).
const DEFAULT_TIMEOUT_S: f64 = 300.0;

/// The chat runner's settings, from the environment.
#[derive(Clone, Debug)]
pub struct ChatSettings {
    /// Where to send.
    pub endpoint: endpoint::Endpoint,
    /// `TDN_CHAT_MODEL`.
    pub model: Option<String>,
    /// `TDN_CHAT_TEMPERATURE`.
    pub temperature: Option<f64>,
}

impl ChatSettings {
    /// Reads the settings through `var` (the environment, or a table in tests).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<ChatSettings, ChatError> {
        let set = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        let Some(base) = set(URL_VAR) else {
            return Err(ChatError::Setup(format!(
                "no chat endpoint: set {URL_VAR} to an OpenAI-compatible base URL ending in /v1 (e.g. https://api.openai.com/v1, or http://127.0.0.1:11434/v1 for Ollama), and {KEY_VAR} (or {FALLBACK_KEY_VAR}) to its key"
            )));
        };
        let url = endpoint::chat_url(&base)?;
        let key = set(KEY_VAR).or_else(|| set(FALLBACK_KEY_VAR));
        let temperature = match set(TEMPERATURE_VAR) {
            None => None,
            Some(t) => Some(
                t.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| {
                        ChatError::Setup(format!(
                            "{TEMPERATURE_VAR} '{}' is not a number >= 0",
                            inert_line(&t)
                        ))
                    })?,
            ),
        };
        let timeout_s = set(TIMEOUT_VAR)
            .and_then(|t| t.trim().parse::<f64>().ok())
            .filter(|t| t.is_finite() && *t > 0.0)
            .unwrap_or(DEFAULT_TIMEOUT_S);
        Ok(ChatSettings {
            endpoint: endpoint::Endpoint {
                url,
                key,
                timeout: request_timeout(timeout_s),
            },
            model: set(MODEL_VAR),
            temperature,
        })
    }
}

/// The request's own time-out: under the sample's, so that a slow endpoint is reported as such
/// before tdn-tui stops the runner (a second of margin, or a tenth for short time-outs).
fn request_timeout(sample_s: f64) -> Duration {
    let margin = (sample_s / 10.0).min(1.0);
    Duration::from_secs_f64((sample_s - margin).max(0.1))
}

/// What one sample of the chat runner did.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatAnswer {
    /// The reply.
    pub output: String,
    /// Tokens the endpoint reported.
    pub tokens: Option<f64>,
    /// The step whose recorded call was re-sent.
    pub call: String,
    /// What was done to its messages, for stderr.
    pub notes: Vec<String>,
}

/// The messages one sample sends, the call they come from, and notes on the change.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    /// The recorded call re-sent.
    pub call: recorded::Call,
    /// Its messages after the change.
    pub rebuilt: rebuild::Rebuilt,
}

/// Rebuilds the recorded call `spec` asks for from `rec`: the answering call, changed as the
/// experiment says. Refuses what cannot be done honestly, saying why.
pub fn prepare(rec: &recorded::Recorded, spec: &ExperimentSpec) -> Result<Prepared, ChatError> {
    let call = rec.answering_call()?;
    let rebuilt = match spec.experiment {
        ExperimentKind::Baseline => rebuild::Rebuilt {
            messages: call.messages.clone(),
            notes: vec![format!(
                "re-sent call '{}' as recorded",
                inert_line(&call.step)
            )],
        },
        ExperimentKind::Ablate => {
            if spec.remove.is_empty() {
                return Err(ChatError::Setup(
                    "an ablation that removes no unit (empty 'remove')".to_owned(),
                ));
            }
            let units = spec
                .remove
                .iter()
                .map(|u| rec.unit(u))
                .collect::<Result<Vec<_>, _>>()?;
            rebuild::cut(rec, call, &units)?
        }
        ExperimentKind::Restore => {
            let [one] = spec.restore.as_slice() else {
                return Err(ChatError::Setup(format!(
                    "the chat runner puts back one unit at a time; this restoration names {}",
                    spec.restore.len()
                )));
            };
            rebuild::put_back(rec, call, rec.unit(one)?)?
        }
        ExperimentKind::Replay => {
            let from = spec.from_step.as_deref().unwrap_or_default();
            let Some(patch) = spec.patch.as_deref() else {
                return Err(ChatError::Setup(format!(
                    "the chat runner re-sends one recorded model call; it cannot re-run your agent from step '{}'. Give the output that step should have produced (--patch), and it re-sends the answering call with that output in place of what the step produced; or use a runner that re-runs your agent",
                    inert_line(from)
                )));
            };
            if from == call.step {
                return Err(ChatError::Setup(format!(
                    "step '{}' is the call the chat runner re-sends: a patch of its output is the answer itself, so there is nothing to send",
                    inert_line(from)
                )));
            }
            rebuild::substitute(rec, call, from, patch)?
        }
    };
    Ok(Prepared {
        call: call.clone(),
        rebuilt,
    })
}

/// One sample: prepares the call, sends it, returns the reply.
pub fn run_sample(
    rec: &recorded::Recorded,
    spec: &ExperimentSpec,
    settings: &ChatSettings,
) -> Result<ChatAnswer, ChatError> {
    let Prepared { call, rebuilt } = prepare(rec, spec)?;
    let model = settings
        .model
        .clone()
        .or_else(|| call.model.clone())
        .ok_or_else(|| {
            ChatError::Setup(format!(
                "the recorded call '{}' names no model: set {MODEL_VAR}",
                inert_line(&call.step)
            ))
        })?;
    let mut notes = rebuilt.notes;
    let body = endpoint::body(
        &model,
        &rebuilt.messages,
        settings.temperature.or(call.temperature),
        spec.seed,
        &mut notes,
    );
    let reply = endpoint::send(&settings.endpoint, &body)?;
    Ok(ChatAnswer {
        output: reply.text,
        tokens: reply.tokens,
        call: call.step,
        notes,
    })
}

/// The runner protocol's answer line: `{"output", "cost": {"tokens"}, "replayed_call"}`.
pub fn answer_line(a: &ChatAnswer) -> String {
    let mut v = serde_json::json!({"output": a.output, "replayed_call": a.call});
    if let Some(t) = a.tokens {
        v["cost"] = serde_json::json!({ "tokens": t });
    }
    v.to_string()
}

#[cfg(test)]
mod tests;

//! Deciding whether a sample flipped (influence.md §7): `similarity` (the default: cosine of the
//! session embedder's vectors below a threshold, strictly), `exact`, `contains:TEXT`, or
//! `cmd:COMMAND` (run like the runner, once per sample). Whatever decides, each sample's
//! similarity to the original is recorded.
//!
//! A `cmd:` rule's command comes only from the user's command line or config. Nothing here prints.

use crate::analysis::influence::{Embedder, cosine};
use crate::analysis::js_number::js_number;
use crate::experiments::runner::{
    Cancel, GroupCommand, STDERR_TAIL, SampleError, SampleErrorKind, run_group,
};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The most a `cmd:` flip rule may print on stdout.
const FLIP_CMD_MAX_STDOUT: usize = 64 << 10;

use crate::config::EmbedderChoice;
pub use crate::config::FlipRule;

impl FlipRule {
    /// The comparator as the ledger's evaluator epoch names it: `similarity<0.8@hashed`,
    /// `exact`, `contains:APPROVED`, `cmd:<sha256 of the command>`.
    pub fn describe(&self, embedder: &EmbedderChoice) -> String {
        match self {
            FlipRule::Similarity { threshold } => {
                let emb = match embedder.command() {
                    Some(c) => format!("cmd:{}", sha256_hex(&c.text)),
                    None => embedder.name().to_owned(),
                };
                format!("similarity<{}@{emb}", js_number(*threshold))
            }
            FlipRule::Exact => "exact".to_owned(),
            FlipRule::Contains(t) => format!("contains:{t}"),
            FlipRule::Command(c) => format!("cmd:{}", sha256_hex(&c.text)),
        }
    }

    /// The rule for people (claims, text output): like [`FlipRule::describe`], but a `cmd:` rule
    /// shows its command and a `cmd:` embedder is named `cmd`.
    pub fn label(&self, embedder: &str) -> String {
        match self {
            FlipRule::Command(c) => format!("cmd:{}", c.text),
            FlipRule::Similarity { threshold } => {
                format!("similarity<{}@{embedder}", js_number(*threshold))
            }
            other => other.describe(&EmbedderChoice::Hashed),
        }
    }

    /// The decision of every rule but `cmd:`, which needs its command (`None`).
    pub fn decide(&self, original: &str, output: &str, similarity: Option<f64>) -> Option<bool> {
        match self {
            FlipRule::Similarity { threshold } => similarity.map(|s| s < *threshold),
            FlipRule::Exact => Some(original.trim() != output.trim()),
            FlipRule::Contains(t) => {
                Some(original.contains(t.as_str()) != output.contains(t.as_str()))
            }
            FlipRule::Command(_) => None,
        }
    }
}

/// Lowercase hex SHA-256 of a string's UTF-8 bytes (how a command is named in the epoch).
pub fn sha256_hex(s: &str) -> String {
    crate::experiments::ledger::digest::sha256_hex(s.as_bytes())
}

/// What the flip test said about one sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Judgement {
    /// The sample flipped.
    pub flipped: bool,
    /// Its similarity to the original (`None`: the embedder failed under a rule that does not
    /// need it).
    pub similarity: Option<f64>,
}

/// The flip rule with the session's embedder.
pub struct FlipJudge {
    rule: FlipRule,
    embedder: Arc<dyn Embedder>,
    command_timeout: Duration,
}

impl FlipJudge {
    /// A judge; `command_timeout` bounds a `cmd:` rule's command.
    pub fn new(rule: FlipRule, embedder: Arc<dyn Embedder>, command_timeout: Duration) -> Self {
        FlipJudge {
            rule,
            embedder,
            command_timeout,
        }
    }

    /// The rule.
    pub fn rule(&self) -> &FlipRule {
        &self.rule
    }

    /// The embedder's name.
    pub fn embedder_name(&self) -> &str {
        self.embedder.name()
    }

    /// The similarity of `output` to `original` under the embedder (one batch of both texts, so
    /// an embedder whose vectors only compare within a batch is measured correctly).
    pub async fn similarity(&self, original: &str, output: &str) -> Result<f64, String> {
        let emb = Arc::clone(&self.embedder);
        let (a, b) = (original.to_owned(), output.to_owned());
        let vectors = tokio::task::spawn_blocking(move || emb.embed(&[a.as_str(), b.as_str()]))
            .await
            .map_err(|e| format!("the embedder stopped: {e}"))?
            .map_err(|e| format!("the embedder failed: {e}"))?;
        match vectors.as_slice() {
            // The one cosine of influence.md §1, the analysis layer's.
            [va, vb] => cosine(va, vb).map_err(|e| format!("the embedder's vectors: {e}")),
            other => Err(format!(
                "the embedder gave {} vectors for 2 texts",
                other.len()
            )),
        }
    }

    /// Judges one sample's answer.
    pub async fn judge(
        &self,
        original: &str,
        output: &str,
        cancel: &Cancel,
    ) -> Result<Judgement, SampleError> {
        let sim = self.similarity(original, output).await;
        let similarity = match (&self.rule, sim) {
            (_, Ok(s)) => Some(s),
            (FlipRule::Similarity { .. }, Err(e)) => return Err(judge_error(e, String::new())),
            (_, Err(e)) => {
                tracing::warn!("similarity not recorded: {e}");
                None
            }
        };
        let flipped = match self.rule.decide(original, output, similarity) {
            Some(f) => f,
            None => self.ask_command(original, output, cancel).await?,
        };
        Ok(Judgement {
            flipped,
            similarity,
        })
    }

    async fn ask_command(
        &self,
        original: &str,
        output: &str,
        cancel: &Cancel,
    ) -> Result<bool, SampleError> {
        let FlipRule::Command(command) = &self.rule else {
            return Err(judge_error("no flip command".to_owned(), String::new()));
        };
        let command = &command.text;
        let stdin = serde_json::json!({"original": original, "output": output}).to_string();
        let cmd = GroupCommand {
            command: command.clone(),
            stdin: stdin.into_bytes(),
            env: Vec::new(),
            timeout: self.command_timeout,
            max_stdout: FLIP_CMD_MAX_STDOUT,
            stderr_tail: STDERR_TAIL,
        };
        let out = run_group(&cmd, cancel).await.map_err(|e| {
            let tail = e.stderr_tail().to_owned();
            let kind = matches!(e, crate::experiments::runner::GroupError::Cancelled { .. });
            let mut err = judge_error(format!("the flip command '{command}' {e}"), tail);
            if kind {
                err.kind = SampleErrorKind::Cancelled;
            }
            err
        })?;
        if out.code != Some(0) {
            return Err(judge_error(
                format!(
                    "the flip command '{command}' exited with status {}",
                    out.code
                        .map_or_else(|| "none (killed)".to_owned(), |c| c.to_string())
                ),
                out.stderr_tail,
            ));
        }
        let flipped = out.stdout.split(|&b| b == b'\n').rev().find_map(|line| {
            match serde_json::from_slice::<Value>(line.trim_ascii()) {
                Ok(Value::Object(m)) => Some(m.get("flipped").and_then(Value::as_bool)),
                _ => None,
            }
        });
        match flipped {
            Some(Some(f)) => Ok(f),
            _ => Err(judge_error(
                format!(
                    "the flip command '{command}' did not answer {{\"flipped\": true|false}} on its last JSON line"
                ),
                out.stderr_tail,
            )),
        }
    }
}

fn judge_error(message: String, stderr_tail: String) -> SampleError {
    SampleError {
        kind: SampleErrorKind::Judge,
        message,
        stderr_tail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_decide() {
        let sim = FlipRule::Similarity { threshold: 0.8 };
        assert_eq!(
            sim.decide("a", "b", Some(0.8)),
            Some(false),
            "strictly below"
        );
        assert_eq!(sim.decide("a", "b", Some(0.7999)), Some(true));
        assert_eq!(FlipRule::Exact.decide(" $80\n", "$80", None), Some(false));
        assert_eq!(FlipRule::Exact.decide("$80", "$120", None), Some(true));
        let c = FlipRule::Contains("APPROVED".to_owned());
        assert_eq!(c.decide("DENIED", "APPROVED now", None), Some(true));
        assert_eq!(c.decide("APPROVED", "APPROVED again", None), Some(false));
        assert_eq!(
            c.decide("DENIED", "approved", None),
            Some(false),
            "case-sensitive"
        );
    }

    #[test]
    fn the_epoch_names_the_rule_and_its_parameters() {
        let sim = FlipRule::Similarity { threshold: 0.8 };
        assert_eq!(
            sim.describe(&EmbedderChoice::Hashed),
            "similarity<0.8@hashed"
        );
        let line = |t: &str| crate::config::UserCommand {
            text: t.to_owned(),
            origin: crate::config::CommandOrigin::CommandLine,
        };
        let cmd = EmbedderChoice::Command(line("embed.py"));
        assert_eq!(
            sim.describe(&cmd),
            format!("similarity<0.8@cmd:{}", sha256_hex("embed.py"))
        );
        assert_eq!(
            FlipRule::Contains("APPROVED".to_owned()).describe(&EmbedderChoice::Hashed),
            "contains:APPROVED"
        );
        let by_command = FlipRule::Command(line("x"));
        assert_eq!(
            by_command.describe(&EmbedderChoice::Hashed),
            format!("cmd:{}", sha256_hex("x"))
        );
        assert_eq!(by_command.label("hashed"), "cmd:x");
    }
}

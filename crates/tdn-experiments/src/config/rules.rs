//! The two settings that choose how experiments compare answers, parsed once into types: the
//! flip rule (`[experiments] flip` with `flip_threshold`, or `--flip`) and the embedder
//! (`[embedder] name`, or `--embedder`). A `cmd:` rule or embedder carries its command with the
//! place it came from, so the consent rule applies to it like to the runner.
//!
//! Nothing downstream parses these strings again. No I/O.

use super::settings::UserCommand;

/// How a sample is judged to have changed the outcome (influence.md §7).
#[derive(Clone, Debug, PartialEq)]
pub enum FlipRule {
    /// Flipped when the cosine similarity of the answers is strictly below `threshold`.
    Similarity {
        /// `[experiments] flip_threshold`, default 0.8 (relative to the embedder, uncalibrated).
        threshold: f64,
    },
    /// Flipped when the answers differ after trimming whitespace.
    Exact,
    /// Flipped when exactly one of the recorded and the new answer contains the text.
    Contains(String),
    /// Flipped when the user's command says so (`{"flipped": true|false}`).
    Command(UserCommand),
}

/// A flip rule as written that names no rule: what was written and why it is not one.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{why}")]
pub struct FlipRuleError {
    /// The rule as written (`[experiments] flip` or `--flip`).
    pub written: String,
    /// Why it is not a rule, and what to write instead.
    pub why: String,
}

/// The default threshold of the similarity rule.
pub const DEFAULT_FLIP_THRESHOLD: f64 = 0.8;

impl Default for FlipRule {
    fn default() -> Self {
        FlipRule::Similarity {
            threshold: DEFAULT_FLIP_THRESHOLD,
        }
    }
}

/// Reads `similarity`, `exact`, `contains:TEXT` or `cmd:COMMAND`; `threshold` is the similarity
/// rule's and `command` turns the text of a `cmd:` rule into a command with its origin.
pub fn parse_flip(
    written: &str,
    threshold: f64,
    command: impl FnOnce(String) -> UserCommand,
) -> Result<FlipRule, FlipRuleError> {
    let bad = |why: String| FlipRuleError {
        written: written.to_owned(),
        why,
    };
    match written {
        "similarity" if threshold.is_finite() => Ok(FlipRule::Similarity { threshold }),
        "similarity" => Err(bad(format!(
            "the flip threshold '{threshold}' is not a finite number"
        ))),
        "exact" => Ok(FlipRule::Exact),
        _ => {
            if let Some(t) = written.strip_prefix("contains:") {
                return if t.is_empty() {
                    Err(bad(
                        "the flip rule 'contains:' names no text; write contains:TEXT (e.g. contains:APPROVED)"
                            .to_owned(),
                    ))
                } else {
                    Ok(FlipRule::Contains(t.to_owned()))
                };
            }
            if let Some(c) = written.strip_prefix("cmd:") {
                return if c.trim().is_empty() {
                    Err(bad(
                        "the flip rule 'cmd:' names no command; write cmd:COMMAND".to_owned(),
                    ))
                } else {
                    Ok(FlipRule::Command(command(c.to_owned())))
                };
            }
            Err(bad(format!(
                "the flip rule '{}' is not one of similarity, exact, contains:TEXT, cmd:COMMAND",
                crate::analysis::model::inert_line(written)
            )))
        }
    }
}

/// The embedder that measures similarity (influence ranking, the similarity flip rule).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum EmbedderChoice {
    /// Hashed bag of words (the default, offline).
    #[default]
    Hashed,
    /// A deterministic stand-in for tests.
    Mock,
    /// Word overlap.
    Lexical,
    /// The user's command (`cmd:COMMAND`).
    Command(UserCommand),
}

impl EmbedderChoice {
    /// The name it goes by: `hashed`, `mock`, `lexical` or `cmd`.
    pub fn name(&self) -> &'static str {
        match self {
            EmbedderChoice::Hashed => "hashed",
            EmbedderChoice::Mock => "mock",
            EmbedderChoice::Lexical => "lexical",
            EmbedderChoice::Command(_) => "cmd",
        }
    }

    /// The command, for a `cmd:` embedder.
    pub fn command(&self) -> Option<&UserCommand> {
        match self {
            EmbedderChoice::Command(c) => Some(c),
            _ => None,
        }
    }
}

/// Reads `hashed`, `mock`, `lexical` or `cmd:COMMAND`; the error says what to write.
pub fn parse_embedder(
    name: &str,
    command: impl FnOnce(String) -> UserCommand,
) -> Result<EmbedderChoice, String> {
    match name {
        "hashed" => Ok(EmbedderChoice::Hashed),
        "mock" => Ok(EmbedderChoice::Mock),
        "lexical" => Ok(EmbedderChoice::Lexical),
        _ => match name.strip_prefix("cmd:") {
            Some(c) if !c.trim().is_empty() => Ok(EmbedderChoice::Command(command(c.to_owned()))),
            Some(_) => Err("'cmd:' names no command; write cmd:COMMAND".to_owned()),
            None => Err(format!(
                "'{}' is not one of hashed, mock, lexical, cmd:COMMAND",
                crate::analysis::model::inert_line(name)
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CommandOrigin;

    fn line(text: String) -> UserCommand {
        UserCommand {
            text,
            origin: CommandOrigin::CommandLine,
        }
    }

    #[test]
    fn flip_rules_parse_once_into_types() {
        assert_eq!(
            parse_flip("similarity", 0.7, line),
            Ok(FlipRule::Similarity { threshold: 0.7 })
        );
        assert_eq!(parse_flip("exact", 0.8, line), Ok(FlipRule::Exact));
        assert_eq!(
            parse_flip("contains:APPROVED", 0.8, line),
            Ok(FlipRule::Contains("APPROVED".to_owned()))
        );
        assert_eq!(
            parse_flip("cmd:./judge.sh", 0.8, line),
            Ok(FlipRule::Command(line("./judge.sh".to_owned())))
        );
        let e = parse_flip("sameish", 0.8, line).unwrap_err();
        assert_eq!(e.written, "sameish");
        assert!(e.why.contains("'sameish'"), "{e}");
        assert!(parse_flip("contains:", 0.8, line).is_err());
        assert!(parse_flip("cmd: ", 0.8, line).is_err());
        assert!(parse_flip("similarity", f64::NAN, line).is_err());
    }

    #[test]
    fn embedders_parse_once_into_types() {
        assert_eq!(parse_embedder("lexical", line), Ok(EmbedderChoice::Lexical));
        let c = parse_embedder("cmd:python3 e.py", line).unwrap();
        assert_eq!(c.name(), "cmd");
        assert_eq!(c.command().map(|c| c.text.as_str()), Some("python3 e.py"));
        assert!(parse_embedder("Hashed", line).is_err());
        assert!(parse_embedder("cmd:  ", line).is_err());
    }
}

//! Building the embedder the settings chose: a built-in one from the analysis layer (`hashed`,
//! `mock`, `lexical`), or the command embedder (`cmd:COMMAND`) that runs the user's program.
//! Whether a configured command may run without asking is the caller's decision
//! (`UserCommand::needs_consent`); this only builds the embedder.

use super::command_embedder::{CommandEmbedder, DEFAULT_EMBEDDER_TIMEOUT_S};
use crate::analysis::influence::{Embedder, HashedEmbedder, LexicalEmbedder, MockEmbedder};
use crate::config::{CommandOrigin, EmbedderChoice, Settings, UserCommand, parse_embedder};

/// The embedder `choice` names; a command embedder stops its command after `timeout_s`.
pub fn build(choice: &EmbedderChoice, timeout_s: f64) -> Box<dyn Embedder> {
    match choice {
        EmbedderChoice::Hashed => Box::new(HashedEmbedder),
        EmbedderChoice::Mock => Box::new(MockEmbedder),
        EmbedderChoice::Lexical => Box::new(LexicalEmbedder),
        EmbedderChoice::Command(c) => Box::new(CommandEmbedder::new(c.text.clone(), timeout_s)),
    }
}

/// The embedder the settings name.
pub fn from_settings(settings: &Settings) -> Box<dyn Embedder> {
    build(&settings.embedder, settings.embedder_timeout_s)
}

/// The embedder named on a command line that reads no config (`--embedder E` of the toolbox):
/// `hashed`, `mock`, `lexical` or `cmd:COMMAND`, the command with the default time-out.
pub fn from_name(name: &str) -> Result<Box<dyn Embedder>, String> {
    let line = |text: String| UserCommand {
        text,
        origin: CommandOrigin::CommandLine,
    };
    parse_embedder(name, line)
        .map(|c| build(&c, DEFAULT_EMBEDDER_TIMEOUT_S))
        .map_err(|e| format!("--embedder {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_pick_the_named_embedder() {
        let mut s = Settings::default();
        assert_eq!(from_settings(&s).name(), "hashed");
        s.embedder = EmbedderChoice::Lexical;
        assert_eq!(from_settings(&s).name(), "lexical");
        s.embedder = EmbedderChoice::Command(UserCommand {
            text: "my-embedder".to_owned(),
            origin: CommandOrigin::CommandLine,
        });
        assert_eq!(from_settings(&s).name(), "cmd");
    }

    #[test]
    fn names_on_the_command_line() {
        assert_eq!(from_name("mock").unwrap().name(), "mock");
        assert_eq!(from_name("cmd:python3 e.py").unwrap().name(), "cmd");
        assert!(from_name("cmd:  ").is_err());
        assert!(
            from_name("Hashed")
                .err()
                .unwrap_or_default()
                .contains("--embedder")
        );
    }
}

//! Choosing the embedder named by the settings: a built-in one from the analysis layer
//! (`hashed`, `mock`, `lexical`), or the command embedder (`cmd:COMMAND`) that runs the user's
//! program. Whether a configured command may run without asking is the caller's decision
//! (`UserCommand::needs_consent`); this only builds the embedder.

use super::command_embedder::CommandEmbedder;
use crate::analysis::influence::{Embedder, builtin_embedder};
use crate::config::Settings;

/// The embedder the settings name. Errors say what is wrong with the setting.
pub fn from_settings(settings: &Settings) -> Result<Box<dyn Embedder>, String> {
    if let Some(e) = builtin_embedder(&settings.embedder) {
        return Ok(e);
    }
    if settings.embedder == "cmd" {
        return match &settings.embedder_command {
            Some(c) if !c.text.trim().is_empty() => Ok(Box::new(CommandEmbedder::new(
                c.text.clone(),
                settings.embedder_timeout_s,
            ))),
            _ => Err("the embedder is 'cmd' but no command was given; use cmd:COMMAND".to_owned()),
        };
    }
    Err(format!(
        "unknown embedder '{}'; use hashed, mock, lexical or cmd:COMMAND",
        crate::analysis::model::inert_line(&settings.embedder)
    ))
}

/// The embedder named on a command line that reads no config (`--embedder E` of the toolbox):
/// `hashed`, `mock`, `lexical` or `cmd:COMMAND`, the command with the default time-out.
pub fn from_name(name: &str) -> Result<Box<dyn Embedder>, String> {
    if let Some(e) = builtin_embedder(name) {
        return Ok(e);
    }
    match name.strip_prefix("cmd:") {
        Some(c) if !c.trim().is_empty() => Ok(Box::new(CommandEmbedder::new(
            c,
            super::command_embedder::DEFAULT_EMBEDDER_TIMEOUT_S,
        ))),
        Some(_) => Err("--embedder 'cmd:' names no command; write cmd:COMMAND".to_owned()),
        None => Err(format!(
            "--embedder '{}' is not one of hashed, mock, lexical, cmd:COMMAND",
            crate::analysis::model::inert_line(name)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CommandOrigin, UserCommand};

    #[test]
    fn settings_pick_the_named_embedder() {
        let mut s = Settings::default();
        assert_eq!(from_settings(&s).unwrap().name(), "hashed");
        for name in ["mock", "lexical"] {
            s.embedder = name.to_owned();
            assert_eq!(from_settings(&s).unwrap().name(), name);
        }
        s.embedder = "cmd".to_owned();
        assert!(from_settings(&s).is_err(), "cmd without a command");
        s.embedder_command = Some(UserCommand {
            text: "my-embedder".to_owned(),
            origin: CommandOrigin::CommandLine,
        });
        assert_eq!(from_settings(&s).unwrap().name(), "cmd");
        s.embedder = "bert".to_owned();
        let err = from_settings(&s).err().unwrap_or_default();
        assert!(err.contains("'bert'"), "{err}");
    }

    #[test]
    fn names_on_the_command_line() {
        assert_eq!(from_name("mock").unwrap().name(), "mock");
        assert_eq!(from_name("cmd:python3 e.py").unwrap().name(), "cmd");
        assert!(from_name("cmd:  ").is_err());
        assert!(from_name("Hashed").is_err());
    }
}

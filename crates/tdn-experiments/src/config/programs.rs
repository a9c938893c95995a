//! The programs the screen hands a step to (`O` pager, `E` editor), read once from the
//! environment with the settings: `$PAGER` (else `less`), `$VISUAL`, else `$EDITOR` (else `vi`).
//! A variable set to blanks counts as unset. These are the user's own programs, so they are never
//! read from a config file a repository could hold.

use super::settings::Env;

/// A program that shows a file, and the place it came from, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewerCommand {
    /// The text run under `sh -c`, with the file's path as `$1`.
    pub text: String,
    /// Where it came from: `$PAGER`, `$VISUAL`, `$EDITOR`, or the default and why.
    pub from: &'static str,
    /// The variable that chooses it (named when the program fails).
    pub variable: &'static str,
}

/// The pager and the editor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Viewers {
    /// `O`: `$PAGER`, else `less`.
    pub pager: ViewerCommand,
    /// `E`: `$VISUAL`, else `$EDITOR`, else `vi`.
    pub editor: ViewerCommand,
}

impl Default for Viewers {
    fn default() -> Self {
        Viewers {
            pager: ViewerCommand {
                text: "less".to_owned(),
                from: "the default, as $PAGER is not set",
                variable: "$PAGER",
            },
            editor: ViewerCommand {
                text: "vi".to_owned(),
                from: "the default, as $EDITOR is not set",
                variable: "$EDITOR",
            },
        }
    }
}

impl Viewers {
    /// The pager and the editor the environment chooses.
    pub fn from_env(env: &dyn Env) -> Viewers {
        let var = |name: &str| env.var(name).filter(|v| !v.trim().is_empty());
        let mut v = Viewers::default();
        if let Some(p) = var("PAGER") {
            v.pager.text = p;
            v.pager.from = "$PAGER";
        }
        if let Some(e) = var("VISUAL") {
            v.editor.text = e;
            v.editor.from = "$VISUAL";
        } else if let Some(e) = var("EDITOR") {
            v.editor.text = e;
            v.editor.from = "$EDITOR";
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct MapEnv(HashMap<&'static str, &'static str>);

    impl Env for MapEnv {
        fn var(&self, name: &str) -> Option<String> {
            self.0.get(name).map(|v| (*v).to_owned())
        }
    }

    #[test]
    fn the_environment_chooses_and_blanks_count_as_unset() {
        let none = Viewers::from_env(&MapEnv(HashMap::new()));
        assert_eq!(
            (none.pager.text.as_str(), none.editor.text.as_str()),
            ("less", "vi")
        );
        let set = Viewers::from_env(&MapEnv(HashMap::from([
            ("PAGER", "most -s"),
            ("EDITOR", "nano"),
        ])));
        assert_eq!(
            (set.pager.text.as_str(), set.pager.from),
            ("most -s", "$PAGER")
        );
        assert_eq!(
            (set.editor.text.as_str(), set.editor.from),
            ("nano", "$EDITOR")
        );
        let visual = Viewers::from_env(&MapEnv(HashMap::from([
            ("VISUAL", "code --wait"),
            ("EDITOR", "nano"),
            ("PAGER", "  "),
        ])));
        assert_eq!(visual.editor.text, "code --wait", "$VISUAL beats $EDITOR");
        assert_eq!(visual.pager.text, "less", "a blank $PAGER is unset");
    }
}

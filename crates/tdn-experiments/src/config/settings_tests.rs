//! The settings' resolution: flags over environment over file over defaults, where a command
//! came from and when it needs consent, bad values warned about and their defaults kept.

use super::*;
use std::collections::HashMap;

struct MapEnv(HashMap<&'static str, &'static str>);
impl Env for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).map(|s| (*s).to_owned())
    }
}

fn with_file(text: &str, origin: ConfigOrigin) -> (tempfile::TempDir, Settings) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("tdn.toml");
    std::fs::write(&p, text).unwrap();
    let s = Settings::resolve_with(
        &Overrides::default(),
        &MapEnv(HashMap::new()),
        Some((p, origin)),
    )
    .unwrap();
    (dir, s)
}

#[test]
fn a_command_from_the_current_folder_needs_consent_and_one_from_the_user_folder_does_not() {
    let (_d, s) = with_file(
        "[runner]\ncommand = \"python3 agent.py\"\n",
        ConfigOrigin::CurrentDir,
    );
    assert!(s.runner.as_ref().unwrap().needs_consent());
    let (_d, s) = with_file(
        "[runner]\ncommand = \"python3 agent.py\"\n",
        ConfigOrigin::UserDir,
    );
    assert!(!s.runner.as_ref().unwrap().needs_consent());
}

#[test]
fn flags_beat_environment_beat_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("tdn.toml");
    std::fs::write(
        &p,
        "[judge]\ncommand = \"file-judge\"\n[runner]\ncommand = \"file-runner\"\n",
    )
    .unwrap();
    let env = MapEnv(HashMap::from([
        ("TDN_JUDGE", "env-judge"),
        ("NO_COLOR", "1"),
    ]));
    let o = Overrides {
        runner: Some("flag-runner".to_owned()),
        ..Overrides::default()
    };
    let s = Settings::resolve_with(&o, &env, Some((p, ConfigOrigin::UserDir))).unwrap();
    assert_eq!(s.runner.unwrap().text, "flag-runner");
    assert_eq!(s.judge.unwrap().text, "env-judge");
    assert!(s.ui.no_color);
}

/// Issue 26: the runs a file's runner can re-run come with it; a runner given on the command
/// line is not bound by them, and a list that is not one of strings is warned about.
#[test]
fn the_runs_a_runner_covers_belong_to_its_file() {
    let text = "[runner]\ncommand = \"python3 stand_in.py\"\nruns = [\"refund\", \"office\"]\n";
    let (_d, s) = with_file(text, ConfigOrigin::UserDir);
    assert_eq!(
        s.runner_runs.as_deref(),
        Some(&["refund".to_owned(), "office".to_owned()][..])
    );
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("tdn.toml");
    std::fs::write(&p, text).unwrap();
    let o = Overrides {
        runner: Some("./my-agent.sh".to_owned()),
        ..Overrides::default()
    };
    let s = Settings::resolve_with(
        &o,
        &MapEnv(HashMap::new()),
        Some((p, ConfigOrigin::UserDir)),
    )
    .unwrap();
    assert_eq!(s.runner_runs, None);
    let (_d, s) = with_file("[runner]\nruns = \"refund\"\n", ConfigOrigin::UserDir);
    assert_eq!(s.runner_runs, None);
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
}

#[test]
fn bad_values_warn_and_keep_defaults() {
    let (_d, s) = with_file(
        "[confidence]\nstrategy = \"ratio:-1\"\nband = -2\n[runner]\nparallel = \"four\"\n[nonsense]\nx = 1\n",
        ConfigOrigin::UserDir,
    );
    assert_eq!(s.confidence, ConfidenceOptions::default());
    assert_eq!(s.runner_parallel, 4);
    assert_eq!(s.warnings.len(), 4, "{:?}", s.warnings);
}

#[test]
fn an_explicit_config_that_does_not_parse_is_an_error_but_a_found_one_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("tdn.toml");
    std::fs::write(&p, "[runner\n").unwrap();
    let env = MapEnv(HashMap::new());
    assert!(
        Settings::resolve_with(
            &Overrides::default(),
            &env,
            Some((p.clone(), ConfigOrigin::Argument))
        )
        .is_err()
    );
    let s = Settings::resolve_with(
        &Overrides::default(),
        &env,
        Some((p, ConfigOrigin::CurrentDir)),
    )
    .unwrap();
    assert_eq!(s.warnings.len(), 1);
    assert!(s.runner.is_none());
}

#[test]
fn strategies_parse_and_validate() {
    assert_eq!(parse_strategy("margin:0.05"), Ok(Strategy::Margin(0.05)));
    assert_eq!(parse_strategy("ratio:0"), Ok(Strategy::Ratio(0.0)));
    assert!(parse_strategy("ratio:NaN").is_err());
    assert!(parse_strategy("median:1").is_err());
}

#[test]
fn the_pager_and_editor_are_resolved_with_the_settings() {
    let env = MapEnv(HashMap::from([
        ("PAGER", "most"),
        ("VISUAL", "code --wait"),
    ]));
    let s = Settings::resolve_with(&Overrides::default(), &env, None).unwrap();
    assert_eq!(
        (s.ui.viewers.pager.text.as_str(), s.ui.viewers.pager.from),
        ("most", "$PAGER")
    );
    assert_eq!(
        (s.ui.viewers.editor.text.as_str(), s.ui.viewers.editor.from),
        ("code --wait", "$VISUAL")
    );
    let none =
        Settings::resolve_with(&Overrides::default(), &MapEnv(HashMap::new()), None).unwrap();
    assert_eq!(none.ui.viewers, crate::config::Viewers::default());
}

#[test]
fn prices_in_the_file_override_and_extend_the_built_in_table() {
    let (_d, s) = with_file(
        "[prices.\"gpt-4o\"]\ninput_per_mtok = 1.0\noutput_per_mtok = 4\n\n\
         [prices.\"my-llama\"]\ninput_per_mtok = 0.1\noutput_per_mtok = 0.2\n\n\
         [prices.\"half\"]\ninput_per_mtok = 1.0\n\n\
         [prices.\"odd\"]\ninput_per_mtok = 1.0\noutput_per_mtok = 1.0\ncached = 2\n",
        ConfigOrigin::UserDir,
    );
    let p = s.prices.lookup("gpt-4o-2024-08-06").expect("priced");
    assert!(p.from_config);
    assert_eq!(p.price.output_per_mtok, 4.0);
    assert_eq!(
        s.prices.lookup("my-llama-3").map(|p| p.name).as_deref(),
        Some("my-llama")
    );
    assert_eq!(s.prices.lookup("half"), None);
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("[prices.\"half\"] needs"))
    );
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("[prices.\"odd\"] cached"))
    );
    assert!(
        !s.warnings
            .iter()
            .any(|w| w.contains("unknown setting [prices]"))
    );
}

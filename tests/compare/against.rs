//! `analyze BAD --against GOOD` (docs/compare.md, "In the ranking"): pairs made from every real
//! export, the bad run a renamed `tdn.run/1` copy with one tool step's argument or result changed
//! and its outcome failed. The changed step (or the model step that made its call) ranks among the
//! first three suspects; a renamed copy with nothing changed shows no divergence and ranks
//! exactly as it does alone.

use super::*;
use tdn_tui::analysis::compare::compare;
use tdn_tui::analysis::influence::{ConfidenceOptions, LexicalEmbedder};
use tdn_tui::analysis::load::{LoadOptions, Loaded, load_path};
use tdn_tui::analysis::model::Run;
use tdn_tui::analysis::report::{Against, AnalyzeOptions, ReferenceChoice, Report, analyze};

fn load_all(path: &Path) -> Vec<Loaded> {
    load_path(path, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()))
}

fn report(bad: &Loaded, good: Option<&Run>) -> Report {
    let embedder = LexicalEmbedder;
    let cmp = good.map(|g| compare(g, &bad.run));
    let opts = AnalyzeOptions {
        reference: ReferenceChoice::FromRun,
        embedder: &embedder,
        confidence: ConfidenceOptions::default(),
        judge: None,
        against: good
            .zip(cmp.as_ref())
            .map(|(run, comparison)| Against { run, comparison }),
        prices: &tdn_tui::analysis::cost::BUILT_IN_PRICES,
    };
    analyze(bad, &opts)
}

/// The steps without children that call a tool, by position.
fn leaf_tool_steps(run: &Run) -> Vec<usize> {
    let mut holds = vec![false; run.steps.len()];
    for s in &run.steps {
        if let Some(p) = s.parent.as_ref().and_then(|p| run.step_index(p.as_str())) {
            holds[p] = true;
        }
    }
    run.steps
        .iter()
        .filter(|s| s.tool.is_some() && !s.container && !holds[s.index])
        .map(|s| s.index)
        .collect()
}

/// Writes `v` as a `tdn.run/1` file in `dir` and loads it.
fn written(dir: &Path, name: &str, v: &Value) -> (PathBuf, Loaded) {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
    let mut runs = load_all(&p);
    assert_eq!(runs.len(), 1, "{name}");
    (p, runs.remove(0))
}

/// The renamed copy of `good` with its outcome failed, and the same with one change at step
/// `at` (an argument when the call has one, else its result).
fn pair(good: &Run, at: usize) -> (Value, Value) {
    let mut plain = serde_json::to_value(good).unwrap();
    rename_native(&mut plain);
    plain["status"] = Value::from("failed");
    let mut bad = plain.clone();
    let args = plain["steps"][at]["tool"]["arguments"].clone();
    match args.as_object().and_then(|m| m.iter().next()) {
        Some((key, value)) => {
            bad["steps"][at]["tool"]["arguments"][key] = match value {
                Value::String(s) => Value::String(format!("{s} (changed)")),
                Value::Number(n) => Value::from(n.as_f64().unwrap_or(0.0) + 1.0),
                _ => Value::from("changed"),
            };
        }
        None => {
            bad["steps"][at]["output"] = Value::from("a result the good run never saw");
            if let Some(m) = bad["steps"][at].as_object_mut() {
                m.remove("error");
            }
        }
    }
    (plain, bad)
}

#[test]
fn a_changed_step_ranks_among_the_first_three_and_a_renamed_copy_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut pairs, mut same) = (0, 0);
    for name in real_exports() {
        for (k, good) in load_all(&real(&name)).into_iter().enumerate() {
            let tools = leaf_tool_steps(&good.run);
            let Some(&at) = tools.get(tools.len() / 2) else {
                continue;
            };
            let tag = format!("{}-{k}", name.replace('/', "__"));
            let (plain, bad) = pair(&good.run, at);
            // Nothing changed but ids and times: no divergence, no suspect added, the same
            // ranking as alone.
            let (_, copy) = written(dir.path(), &format!("{tag}-same.json"), &plain);
            let alone = report(&copy, None);
            let against = report(&copy, Some(&good.run));
            let section = against.against.as_ref().expect("an against section");
            assert!(section.first_divergence.is_none(), "{tag}: {section:?}");
            assert!(section.suspect.is_none(), "{tag}");
            let ranked = |r: &Report| {
                r.suspects
                    .iter()
                    .map(|s| (s.index, s.category.clone(), s.score))
                    .collect::<Vec<_>>()
            };
            assert_eq!(ranked(&alone), ranked(&against), "{tag}");
            same += 1;
            // One step changed: it, or the model step that made its call, is a suspect among
            // the first three, and its evidence says where the runs part.
            let (_, changed) = written(dir.path(), &format!("{tag}-changed.json"), &bad);
            let r = report(&changed, Some(&good.run));
            let section = r.against.as_ref().expect("an against section");
            let d = section
                .first_divergence
                .as_ref()
                .unwrap_or_else(|| panic!("{tag}: no divergence"));
            assert_eq!(d.bad.as_ref().map(|b| b.index), Some(at), "{tag}: {d:?}");
            let blamed = section
                .suspect
                .as_ref()
                .unwrap_or_else(|| panic!("{tag}: the divergence blamed no step"))
                .index;
            let step = &changed.run.steps[blamed];
            assert!(
                blamed == at || (step.kind.is_model() && blamed < at),
                "{tag}: blamed {blamed}, changed {at}"
            );
            let top: Vec<_> = r.suspects.iter().take(3).collect();
            let s = top.iter().find(|s| s.index == blamed).unwrap_or_else(|| {
                panic!(
                    "{tag}: step {blamed} not among the first three: {:?}",
                    r.suspects
                        .iter()
                        .take(6)
                        .map(|s| (s.index, &s.category, s.score))
                        .collect::<Vec<_>>()
                )
            });
            assert!(
                s.evidence
                    .iter()
                    .any(|e| e.starts_with("the first divergence from the good run")),
                "{tag}: {:?}",
                s.evidence
            );
            pairs += 1;
        }
    }
    assert!(same == pairs && pairs >= 15, "{same} copies, {pairs} pairs");
}

#[test]
fn analyze_against_on_the_command_line_says_where_the_runs_part() {
    let dir = tempfile::tempdir().unwrap();
    let name = "otlp/evilmartians__quo_tav_agent.json";
    let good = load_all(&real(name)).remove(0);
    let tools = leaf_tool_steps(&good.run);
    let at = tools[tools.len() / 2];
    let (_, bad) = pair(&good.run, at);
    let good_path = dir.path().join("good.json");
    std::fs::write(&good_path, serde_json::to_string(&good.run).unwrap()).unwrap();
    let (bad_path, _) = written(dir.path(), "bad.json", &bad);
    let args = |extra: &[&str]| {
        let mut a: Vec<std::ffi::OsString> = vec![
            "analyze".into(),
            bad_path.clone().into(),
            "--against".into(),
            good_path.clone().into(),
        ];
        a.extend(extra.iter().map(Into::into));
        a
    };
    let run = |a: Vec<std::ffi::OsString>| {
        let refs: Vec<&std::ffi::OsStr> = a.iter().map(|s| s.as_os_str()).collect();
        tdn(&refs)
    };
    let out = run(args(&["--json"]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["against"]["first_divergence"]["bad"]["index"], at);
    assert_eq!(v["against"]["run"], good.run.id.as_str());
    let blamed = &v["against"]["suspect"]["index"];
    assert!(
        v["suspects"]
            .as_array()
            .unwrap()
            .iter()
            .take(3)
            .any(|s| &s["index"] == blamed),
        "{}",
        v["suspects"]
    );
    let text = String::from_utf8(run(args(&[])).stdout).unwrap();
    assert!(text.contains("Compared with the good run"), "{text}");
    assert!(text.contains("First divergence: this run's step"), "{text}");
    // Alone, the report has no `against`.
    let alone = tdn(&["analyze".as_ref(), bad_path.as_os_str(), "--json".as_ref()]);
    let v: Value = serde_json::from_slice(&alone.stdout).unwrap();
    assert!(v.get("against").is_none());
    // A file of several trials: the good run is a trial of the same task that succeeded.
    let file = super::cli::trials(dir.path());
    let out = tdn(&[
        "analyze".as_ref(),
        file.as_os_str(),
        "--index".as_ref(),
        "0".as_ref(),
        "--against".as_ref(),
        file.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &v["against"]["first_divergence"];
    assert_eq!(f["what"]["key"], "reservation_id", "{f}");
    assert!(
        f["what"]["text"]
            .as_str()
            .unwrap()
            .contains("'ABC132' here, 'ABC123' in the good run"),
        "{f}"
    );
    let blamed = &v["against"]["suspect"]["index"];
    assert!(
        v["suspects"]
            .as_array()
            .unwrap()
            .iter()
            .take(3)
            .any(|s| &s["index"] == blamed),
        "{}",
        v["suspects"]
    );
    // A trial whose task has no other trial that succeeded is an error that says how to pick.
    let out = tdn(&[
        "analyze".as_ref(),
        file.as_os_str(),
        "--index".as_ref(),
        "1".as_ref(),
        "--against".as_ref(),
        file.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--against-index"), "{err}");
}

//! Pairs made from every real export, compared by the library as `diff` compares them: the
//! export against itself with every id and time renamed at its source (no divergence), against
//! its `tdn.run/1` form renamed (no divergence), and against that form with one tool step's
//! argument or result changed (that step is the first divergence).

use super::*;
use tdn_tui::analysis::compare::{Change, Class, compare};
use tdn_tui::analysis::load::{LoadOptions, load_path};
use tdn_tui::analysis::model::Run;

fn load_runs(path: &Path) -> Vec<Run> {
    load_path(path, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()))
        .into_iter()
        .map(|l| l.run)
        .collect()
}

/// The export at `name` with every id and time renamed, written into `dir`.
fn renamed_export(name: &str, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(real(name)).unwrap();
    let out = match serde_json::from_str::<Value>(&text) {
        Ok(mut v) => {
            rename_export(&mut v);
            serde_json::to_string(&v).unwrap()
        }
        // JSON lines
        Err(_) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                rename_export(&mut v);
                serde_json::to_string(&v).unwrap()
            })
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let path = dir.join(name.replace('/', "__"));
    std::fs::write(&path, out).unwrap();
    path
}

/// What differs, for a failure message.
fn explain(good: &Run, bad: &Run) -> String {
    let c = compare(good, bad);
    c.differences
        .iter()
        .take(5)
        .map(|d| format!("{:?} {:?}/{:?}: {}", d.change, d.good, d.bad, d.sentence()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_real_export_recorded_again_with_new_ids_and_times_does_the_same_thing() {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = 0;
    for name in real_exports() {
        let originals = load_runs(&real(&name));
        let again = load_runs(&renamed_export(&name, dir.path()));
        assert_eq!(originals.len(), again.len(), "{name}");
        for (k, (g, b)) in originals.iter().zip(&again).enumerate() {
            // The renaming reached the run: no step keeps its id.
            assert_eq!(g.steps.len(), b.steps.len(), "{name} run {k}");
            let kept = g
                .steps
                .iter()
                .zip(&b.steps)
                .filter(|(x, y)| x.id == y.id)
                .count();
            assert_eq!(kept, 0, "{name} run {k}: {kept} step ids were not renamed");
            let c = compare(g, b);
            assert!(
                c.first_divergence.is_none(),
                "{name} run {k}:\n{}",
                explain(g, b)
            );
            assert!(
                c.differences.iter().all(|d| d.class == Class::Wording),
                "{name} run {k}:\n{}",
                explain(g, b)
            );
            runs += 1;
        }
    }
    assert!(runs >= 25, "only {runs} runs compared");
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

/// A JSON value changed: a string gets a suffix, a number grows, anything else becomes a
/// string.
fn changed(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(format!("{s} (changed)")),
        Value::Number(n) => Value::from(n.as_f64().unwrap_or(0.0) + 1.0),
        Value::Bool(b) => Value::Bool(!b),
        _ => Value::from("changed"),
    }
}

#[test]
fn one_changed_argument_or_result_in_a_renamed_copy_is_the_first_divergence() {
    let dir = tempfile::tempdir().unwrap();
    let (mut arguments, mut results, mut same) = (0, 0, 0);
    for name in real_exports() {
        for (k, good) in load_runs(&real(&name)).iter().enumerate() {
            let native = serde_json::to_value(good).unwrap();
            let write = |tag: &str, v: &Value| {
                let p = dir
                    .path()
                    .join(format!("{}-{k}-{tag}.json", name.replace('/', "__")));
                std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
                let mut runs = load_runs(&p);
                assert_eq!(runs.len(), 1);
                runs.remove(0)
            };
            // The same run as tdn.run/1, renamed: no divergence.
            let mut plain = native.clone();
            rename_native(&mut plain);
            let b = write("same", &plain);
            assert_ne!(
                b.steps.first().map(|s| &s.id),
                good.steps.first().map(|s| &s.id)
            );
            let c = compare(good, &b);
            assert!(
                c.first_divergence.is_none(),
                "{name} run {k}:\n{}",
                explain(good, &b)
            );
            same += 1;
            let tools = leaf_tool_steps(good);
            let Some(&at) = tools.get(tools.len() / 2) else {
                continue;
            };
            // One argument changed.
            let args = plain["steps"][at]["tool"]["arguments"].clone();
            if let Some((key, value)) = args.as_object().and_then(|m| m.iter().next()) {
                let mut bad = plain.clone();
                bad["steps"][at]["tool"]["arguments"][key] = changed(value);
                let b = write("argument", &bad);
                let c = compare(good, &b);
                let f = c
                    .first_divergence
                    .clone()
                    .unwrap_or_else(|| panic!("{name} run {k}: no divergence"));
                assert_eq!(
                    (f.good, f.bad),
                    (Some(at), Some(at)),
                    "{name} run {k}:\n{}",
                    explain(good, &b)
                );
                let d = c.divergence_difference().unwrap();
                assert_eq!(
                    d.change,
                    Change::Argument,
                    "{name} run {k}: {}",
                    d.sentence()
                );
                assert_eq!(d.key.as_deref(), Some(key.as_str()), "{name} run {k}");
                arguments += 1;
            }
            // The tool's result changed.
            let mut bad = plain.clone();
            let result = bad["steps"][at]
                .get("output")
                .map_or(Value::from("a result"), changed);
            bad["steps"][at]["output"] = result;
            if let Some(m) = bad["steps"][at].as_object_mut() {
                m.remove("error");
            }
            let b = write("result", &bad);
            let c = compare(good, &b);
            let f = c
                .first_divergence
                .clone()
                .unwrap_or_else(|| panic!("{name} run {k}: no divergence"));
            assert_eq!(
                (f.good, f.bad),
                (Some(at), Some(at)),
                "{name} run {k}:\n{}",
                explain(good, &b)
            );
            let change = c.divergence_difference().unwrap().change;
            assert!(
                matches!(change, Change::ToolResult | Change::Error),
                "{name} run {k}: {change:?}"
            );
            results += 1;
        }
    }
    assert!(same >= 25, "{same}");
    assert!(
        arguments >= 9 && results >= 18,
        "{arguments} arguments, {results} results"
    );
}

//! Every fixture through `analyze` and `validate` with no flags, and the `import` and `eval`
//! commands.

use super::*;
use serde_json::json;

#[test]
fn every_fixture_is_analysed_with_no_flags() {
    let names = [
        "otlp-genai.json",
        "otlp-lines.jsonl",
        "openinference.json",
        "otlp-indexed.json",
        "langfuse-trace.json",
        "langfuse-traces-list.json",
        "jaeger-genai.json",
        "whowhen/algorithm-generated.json",
        "whowhen/hand-crafted.json",
        "taubench.json",
    ];
    let embedder = FlatEmbedder;
    let opts = AnalyzeOptions {
        reference: ReferenceChoice::FromRun,
        embedder: &embedder,
        confidence: ConfidenceOptions::default(),
        judge: None,
        against: None,
        prices: &tdn_tui::analysis::cost::BUILT_IN_PRICES,
    };
    for name in names {
        for l in load_all(name) {
            let report = analyze(&l, &opts);
            assert_eq!(report.run.id, l.run.id, "{name}");
            assert_eq!(report.run.steps, l.run.steps.len(), "{name}");
            assert_eq!(report.run.source_format, l.source_format.name(), "{name}");
        }
        let out = bin(&["validate", fixture(name).to_str().unwrap_or_default()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
    }
}

#[test]
fn import_writes_a_loadable_run_and_asks_for_an_index() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out_path = dir.path().join("run.json");
    let out = out_path.to_str().unwrap_or_default();
    let tau = fixture("taubench.json");
    let tau = tau.to_str().unwrap_or_default();

    let o = bin(&["import", tau, "-o", out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the file holds 2 runs; choose one with --index N (0 to 1)"),
        "{}",
        stderr(&o)
    );
    assert!(!out_path.exists(), "nothing is written without --index");

    let o = bin(&["import", tau, "-o", out, "--index", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap_or_default())
            .unwrap_or_else(|e| panic!("the output is not JSON: {e}"));
    assert_eq!(written["format"], "tdn.run/1");
    assert_eq!(written["id"], "task-8-trial-1");
    let back = load_path(&out_path, &LoadOptions::default()).unwrap_or_default();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].source_format, SourceFormat::Native);
    assert_eq!(back[0].run.steps.len(), 4);

    let o = bin(&["import", tau, "-o", out, "--index", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--index 5 is out of range"),
        "{}",
        stderr(&o)
    );

    let genai = fixture("otlp-genai.json");
    let o = bin(&[
        "import",
        "--from",
        "whowhen",
        genai.to_str().unwrap_or_default(),
        "-o",
        out,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot import as whowhen"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn eval_scores_labelled_runs_per_set_in_both_settings() {
    let dir = fixture("whowhen");
    let dir = dir.to_str().unwrap_or_default();
    for (flag, reference) in [(None, true), (Some("--no-reference"), false)] {
        let mut args = vec!["eval", dir, "--json"];
        args.extend(flag);
        let o = bin(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v["format"], "tdn.eval/2");
        assert_eq!(v["reference"], json!(reference));
        assert_eq!(v["sets"].as_array().map(Vec::len), Some(1));
        assert_eq!(v["sets"][0]["set"], "whowhen");
        assert_eq!(v["total"]["runs"], 2);
        assert_eq!(v["total"]["step_top1"]["total"], 2);
        assert_eq!(v["total"]["agent"]["total"], 2);
        let labels: Vec<Value> = v["runs"]
            .as_array()
            .map(|r| r.iter().map(|x| x["label"].clone()).collect())
            .unwrap_or_default();
        assert_eq!(
            labels,
            [
                json!({"steps": [3], "missing": 0, "agent": "Verification_Expert"}),
                json!({"steps": [3], "missing": 0, "agent": "WebSurfer"})
            ]
        );
    }
}

#[test]
fn eval_needs_labels_for_runs_without_inline_ones() {
    let tau = fixture("taubench.json");
    let tau = tau.to_str().unwrap_or_default();
    let o = bin(&["eval", tau]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("holds a labelled run"),
        "{}",
        stderr(&o)
    );

    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let labels = dir.path().join("labels.json");
    std::fs::write(&labels, r#"{"taubench.json#0": {"step": 2}}"#).unwrap_or_default();
    let o = bin(&[
        "eval",
        tau,
        "--labels",
        labels.to_str().unwrap_or_default(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v["total"]["runs"], 1);
    assert_eq!(v["runs"][0]["index"], 0);
    assert_eq!(
        v["runs"][0]["label"],
        json!({"steps": [2], "missing": 0, "agent": null})
    );
    assert_eq!(v["total"]["agent"]["total"], 0);
    assert_eq!(v["unlabelled"][0]["run"], "task-8-trial-1");
}

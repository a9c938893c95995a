//! What a run cost, as `analyze` prints it in JSON, text and Markdown: the cost a real export
//! records, an estimate from tokens marked as one, and a price from `tdn.toml`.

use super::real_export;

#[test]
fn the_cost_a_trace_records_is_in_the_json_text_and_markdown_and_an_estimate_says_so() {
    // Koog via Langfuse records $0.0011775 and $0.00061 on its two model calls.
    let koog = real_export("langfuse/langfuse__koog-2025-08-26.trace.json");
    let r = super::report(&super::run(&["analyze", "--json", &koog]));
    let c = &r["cost"];
    assert!(
        (c["total_usd"].as_f64().unwrap_or(0.0) - 0.0017875).abs() < 1e-9,
        "{c}"
    );
    assert_eq!(c["source"], "recorded");
    assert_eq!(c["steps"].as_array().map(Vec::len), Some(2));
    let text = String::from_utf8_lossy(&super::run(&["analyze", &koog]).stdout).into_owned();
    assert!(
        text.contains("Cost: $0.0018, as the trace records it (2 steps)."),
        "{text}"
    );
    let md = super::run(&["analyze", "--format", "markdown", &koog]).stdout;
    assert!(String::from_utf8_lossy(&md).contains("- **Cost**: $0.0018, as the trace records it"));
    // smolagents over OTLP records tokens of o1 and no cost: an estimate, marked.
    let smol = real_export("otlp/evilmartians__smol_deep_research_agent.json");
    let r = super::report(&super::run(&["analyze", "--json", &smol]));
    assert_eq!(r["cost"]["source"], "estimated");
    assert_eq!(r["cost"]["steps"][0]["priced_as"], "o1");
    let text = String::from_utf8_lossy(&super::run(&["analyze", &smol]).stdout).into_owned();
    assert!(
        text.contains("Cost: ~$0.7, estimated from tokens at the prices of"),
        "{text}"
    );
    // A price in tdn.toml replaces the built-in one.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tdn.toml"),
        "[prices.\"o1\"]\ninput_per_mtok = 0\noutput_per_mtok = 0\n",
    )
    .unwrap();
    let out = super::tdn(dir.path(), &["analyze", "--json", &smol])
        .output()
        .unwrap();
    let r = super::report(&out);
    assert_eq!(r["cost"]["total_usd"], 0.0, "{}", r["cost"]);
}

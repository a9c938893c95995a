//! The Langfuse importer reads what each observation cost and counted, in every shape exports
//! record it.

use super::*;
use serde_json::json;

#[test]
fn recorded_costs_are_read_in_every_export_shape() {
    let o = |id: &str, t: &str, cost: Value| {
        let mut o = json!({"id": id, "traceId": "t", "type": t});
        if let (Some(m), Some(c)) = (o.as_object_mut(), cost.as_object()) {
            m.extend(c.clone());
        }
        o
    };
    let doc = Document::One(json!({"id": "t", "observations": [
        o("a", "GENERATION", json!({"costDetails": {"total": 0.00061}, "totalCost": 9.0})),
        o("b", "GENERATION", json!({"calculatedTotalCost": 0.002})),
        o("c", "GENERATION", json!({"totalCost": "0.003"})),
        o("d", "GENERATION", json!({"inputCost": 0.001, "outputCost": 0.0005})),
        o("e", "SPAN", json!({"totalCost": 0})),
        o("f", "GENERATION", json!({"totalCost": -1})),
        // Langfuse knew no price: a total of 0 beside empty details, or no details at all.
        o("g", "GENERATION", json!({"costDetails": {}, "totalCost": 0})),
        o("h", "GENERATION", json!({"calculatedTotalCost": 0, "totalCost": 0})),
        // A price that came to 0: the details say so.
        o("i", "GENERATION", json!({"costDetails": {"input": 0.0, "output": 0.0}, "totalCost": 0})),
    ]}));
    let run = Langfuse
        .import(doc, None)
        .unwrap_or_default()
        .remove(0)
        .value;
    let costs: Vec<Option<f64>> = (0..9)
        .map(|k| run["steps"][k]["usage"]["cost_usd"].as_f64())
        .collect();
    // costDetails.total first; a span's zero and a negative cost are no cost.
    let want = [
        Some(0.00061),
        Some(0.002),
        Some(0.003),
        Some(0.0015),
        None,
        None,
        None,
        None,
        Some(0.0),
    ];
    assert_eq!(costs, want);
}

/// Token counts as the v3 API writes them (`inputUsage`, `outputUsage`) when no usage object
/// holds them.
#[test]
fn token_counts_are_read_from_the_v3_fields() {
    let doc = Document::One(json!({"id": "t", "observations": [
        {"id": "g", "traceId": "t", "type": "GENERATION", "inputUsage": 1200, "outputUsage": 15},
        {"id": "h", "traceId": "t", "type": "GENERATION", "inputUsage": 9, "outputUsage": 9,
         "usageDetails": {"input": 30, "output": 4}},
    ]}));
    let run = Langfuse
        .import(doc, None)
        .unwrap_or_default()
        .remove(0)
        .value;
    let usage = |k: usize| {
        let u = &run["steps"][k]["usage"];
        (u["input_tokens"].as_u64(), u["output_tokens"].as_u64())
    };
    assert_eq!(usage(0), (Some(1200), Some(15)));
    assert_eq!(usage(1), (Some(30), Some(4)), "the usage object first");
}

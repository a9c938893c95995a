//! The Langfuse importer reads what each observation cost, in every shape exports record it.

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
    ]}));
    let run = Langfuse
        .import(doc, None)
        .unwrap_or_default()
        .remove(0)
        .value;
    let costs: Vec<Option<f64>> = (0..6)
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
    ];
    assert_eq!(costs, want);
}

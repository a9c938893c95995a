//! How `analyze` names the steps of an imported trace: by the names a trace viewer shows, with
//! their positions, never by the span ids nobody reads.

use super::{real_export, report, run};

#[test]
fn an_imported_traces_suspects_causes_and_claim_origins_are_named_as_trace_viewers_name_them() {
    // A Gemini agent via Langfuse: span ids for step ids, `chat gemini-2.5-flash` for the name of
    // its model calls at positions 3, 5 and 7.
    let file = real_export("langfuse/langfuse__csharp-agent-with-gemini-2026-03-09.trace.json");
    let r = report(&run(&["analyze", "--json", &file]));
    let top = &r["suspects"][0];
    let id = top["step"].as_str().unwrap_or_default().to_owned();
    assert_eq!(top["name"], "chat gemini-2.5-flash", "{top}");
    assert_eq!(r["verdict"]["name"], "chat gemini-2.5-flash");
    let origin = r["claims"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["origin_step"].is_string()))
        .expect("a claim with an origin");
    assert_eq!(origin["origin_name"], "chat gemini-2.5-flash", "{origin}");
    let at = origin["origin_index"].as_u64().expect("its position") + 1;

    let text = String::from_utf8_lossy(&run(&["analyze", &file]).stdout).into_owned();
    let position = top["index"].as_u64().unwrap_or_default() + 1;
    assert!(
        text.contains(&format!(
            "Top suspect: step 'chat gemini-2.5-flash' (position {position})"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "(first written at step 'chat gemini-2.5-flash' (position {at}))"
        )),
        "{text}"
    );
    assert!(
        !text.contains(&id),
        "the top suspect's span id is shown:\n{text}"
    );
    let md = String::from_utf8_lossy(&run(&["analyze", "--format", "markdown", &file]).stdout)
        .into_owned();
    assert!(
        md.contains(&format!(
            "**Top suspect**: step 'chat gemini-2.5-flash' (position {position})"
        )),
        "{md}"
    );
    assert!(!md.contains(&id), "{md}");
}

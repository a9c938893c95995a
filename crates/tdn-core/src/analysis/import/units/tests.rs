//! The units pass on run JSON: documents found inside prompts, repeated texts interned, tool
//! results traced by call id, dropped context, stable ids, places that slice to the unit's text,
//! and any input without a panic.

use super::*;
use proptest::prelude::*;
use serde_json::json;

const DOC_1: &str =
    "Meta Platforms reported full-year 2023 revenue of 134.90 billion dollars, up 16 percent.";
const DOC_2: &str =
    "Reality Labs lost 16.12 billion dollars in 2023 as it kept investing in the metaverse.";
const DOC_3: &str =
    "The company repurchased 20 billion dollars of its Class A common stock during 2023.";

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A LangChain-style RAG trace: a retriever that returned three documents, two of which were
/// pasted into the prompt of the model call after it.
fn rag() -> Vec<Map<String, Value>> {
    let prompt = format!(
        "Answer the following question based on the provided context:\nContext:\n{DOC_1}\n\n{DOC_2}\n\nQuestion: What was Meta's revenue in 2023?"
    );
    vec![
        obj(
            json!({"id": "chain", "kind": "event", "container": true, "input": {"question": "What was Meta's revenue in 2023?"}}),
        ),
        obj(json!({"id": "ret", "kind": "retrieval", "documents": [
            {"id": "doc-a", "text": DOC_1}, {"id": "doc-b", "text": DOC_2}, {"id": "doc-c", "text": DOC_3}]})),
        obj(json!({"id": "llm", "kind": "llm", "input": [
            {"role": "system", "content": "You are a financial analyst."},
            {"role": "user", "content": prompt}],
            "output": "Meta's revenue in 2023 was 134.90 billion dollars."})),
    ]
}

fn units_by_id(units: &[Value]) -> HashMap<String, Value> {
    units
        .iter()
        .map(|u| (u["id"].as_str().unwrap_or_default().to_owned(), u.clone()))
        .collect()
}

/// Every `at` entry of every unit slices its step's message content to the unit's text, and the
/// step's `context.sent` lists the unit.
/// What the first call's last user turn asks, made on a copy of `steps`.
fn asked_of(steps: &[Map<String, Value>]) -> Option<String> {
    let mut copy = steps.to_vec();
    attach_to(&mut JsonSteps::new(&mut copy), ReadCalls::default()).asked
}

fn check_places(steps: &[Map<String, Value>], units: &[Value]) -> Result<(), String> {
    for u in units {
        let text = u["text"].as_str().unwrap_or_default();
        let id = u["id"].as_str().unwrap_or_default();
        for at in u["at"].as_array().into_iter().flatten() {
            let step = steps
                .iter()
                .find(|s| s.get("id") == at.get("step"))
                .ok_or("no step")?;
            let n = at["message"].as_u64().ok_or("no message")? as usize;
            let content = step["messages"][n]["content"]
                .as_str()
                .ok_or("no content")?;
            let place = crate::analysis::model::UnitAt {
                step: "x".into(),
                message: n,
                start: at.get("start").and_then(Value::as_u64).map(|x| x as usize),
                end: at.get("end").and_then(Value::as_u64).map(|x| x as usize),
            };
            if place.slice(content) != Some(text) {
                return Err(format!("{at} in {content:?} is not {text:?}"));
            }
            let sent = step["context"]["sent"].as_array().ok_or("no sent")?;
            if !sent.iter().any(|s| s == id) {
                return Err(format!("{id} not in sent of {}", at["step"]));
            }
        }
    }
    Ok(())
}

#[test]
fn documents_pasted_into_a_prompt_are_the_retriever_s_units_and_the_rest_is_dropped() {
    let mut steps = rag();
    let a = attach(&mut steps);
    let units = units_by_id(&a.units);
    // The documents keep the trace's own ids, whether sent or dropped.
    assert_eq!(units["doc-a"]["kind"], "document");
    assert_eq!(units["doc-a"]["produced_by"], "ret");
    assert_eq!(units["doc-a"]["at"].as_array().map(Vec::len), Some(1));
    assert!(units["doc-b"]["at"].is_array());
    assert_eq!(units["doc-c"]["produced_by"], "ret");
    assert!(units["doc-c"].get("at").is_none(), "never sent: no place");
    let llm = &steps[2];
    assert!(llm.get("input").is_none(), "the input became messages");
    assert_eq!(llm["messages"][1]["role"], "user");
    let sent: Vec<&str> = llm["context"]["sent"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    assert!(sent.contains(&"doc-a") && sent.contains(&"doc-b") && !sent.contains(&"doc-c"));
    let available = llm["context"]["available"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        available.iter().any(|x| x == "doc-c"),
        "dropped: {available:?}"
    );
    // The prompt's own text around the documents: the template and the question.
    let kinds: Vec<(&str, &str)> = a
        .units
        .iter()
        .map(|u| {
            (
                u["kind"].as_str().unwrap_or(""),
                u["text"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(kinds.contains(&("instruction", "You are a financial analyst.")));
    assert!(kinds.contains(&(
        "user",
        "Answer the following question based on the provided context:\nContext:"
    )));
    assert!(kinds.contains(&("user", "Question: What was Meta's revenue in 2023?")));
    assert_eq!(
        asked_of(&rag()).as_deref(),
        Some("Question: What was Meta's revenue in 2023?")
    );
    assert_eq!(check_places(&steps, &a.units), Ok(()));
    // The container keeps its input.
    assert!(steps[0].get("input").is_some() && steps[0].get("messages").is_none());
}

#[test]
fn a_repeated_text_is_one_unit_and_ids_are_the_same_on_a_second_import() {
    let conv = |extra: &[Value]| {
        let mut msgs = vec![
            json!({"role": "system", "content": "Be brief."}),
            json!({"role": "user", "content": "Hi"}),
        ];
        msgs.extend_from_slice(extra);
        json!(msgs)
    };
    let make = || {
        vec![
            obj(
                json!({"id": "m1", "kind": "llm", "input": conv(&[]), "output": "Hello! How can I help?"}),
            ),
            obj(json!({"id": "m2", "kind": "llm", "input": conv(&[
                json!({"role": "assistant", "content": "Hello! How can I help?"}),
                json!({"role": "user", "content": "Bye"})]), "output": "Bye."})),
        ]
    };
    let (mut one, mut two) = (make(), make());
    let (a, b) = (attach(&mut one), attach(&mut two));
    assert_eq!(
        a.units, b.units,
        "the same trace gives the same units and ids"
    );
    assert_eq!(a.units.len(), 4, "{:#?}", a.units);
    let by = units_by_id(&a.units);
    let sys = by
        .values()
        .find(|u| u["kind"] == "instruction")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        sys["at"].as_array().map(Vec::len),
        Some(2),
        "one unit, two places"
    );
    assert_eq!(sys["id"], hashed_id("instruction", "Be brief."));
    let earlier = by
        .values()
        .find(|u| u["kind"] == "message")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        earlier["produced_by"], "m1",
        "the turn the first call wrote"
    );
    assert_eq!(check_places(&one, &a.units), Ok(()));
    assert!(
        asked_of(&make()).is_none(),
        "no document in the prompt: nothing to cut out"
    );
}

#[test]
fn tool_results_are_traced_by_call_id_and_dropped_only_when_every_result_is_accounted_for() {
    let steps = |fed_back: Value| {
        vec![
            obj(
                json!({"id": "m1", "kind": "llm", "input": [{"role": "user", "content": "weather?"}]}),
            ),
            obj(
                json!({"id": "t1", "kind": "tool", "tool": {"name": "w", "call_id": "c1"}, "output": {"temp": 23, "sky": "stormy over the whole of the city"}}),
            ),
            obj(
                json!({"id": "t2", "kind": "tool", "tool": {"name": "n", "call_id": "c2"}, "output": "The news service returned three long headlines today."}),
            ),
            obj(json!({"id": "m2", "kind": "llm", "input": fed_back})),
        ]
    };
    // The first result fed back in another form, answered by its call id; the second never.
    let mut s = steps(json!([
        {"role": "user", "content": "weather?"},
        {"role": "tool", "tool_call_id": "c1", "content": "23 degrees, stormy"}]));
    let a = attach(&mut s);
    let by = units_by_id(&a.units);
    let fed = by
        .values()
        .find(|u| u["text"] == "23 degrees, stormy")
        .cloned()
        .unwrap_or_default();
    assert_eq!(fed["produced_by"], "t1");
    assert_eq!(fed["kind"], "tool_result");
    let dropped: Vec<&Value> = by.values().filter(|u| u.get("at").is_none()).collect();
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(dropped[0]["produced_by"], "t2");
    assert_eq!(
        s[3]["context"]["available"].as_array().map(Vec::len),
        Some(3)
    );
    // A result fed back that no tool can be traced to: the other may be it, nothing is dropped.
    let mut s = steps(json!([
        {"role": "user", "content": "weather?"},
        {"role": "tool", "tool_call_id": "c1", "content": "23 degrees, stormy"},
        {"role": "tool", "content": "headlines, shortened"}]));
    let a = attach(&mut s);
    assert!(
        a.units.iter().all(|u| u.get("at").is_some()),
        "{:#?}",
        a.units
    );
    assert!(s[3]["context"].get("available").is_none());
    // Found by content inside an observation: the whole message is the unit, made by the tool.
    let mut s = steps(json!([
        {"role": "user", "content": "weather?"},
        {"role": "tool-response", "content": "Call id: c9\nObservation:\nThe news service returned three long headlines today."}]));
    let a = attach(&mut s);
    let obs = a
        .units
        .iter()
        .find(|u| u["text"].as_str().is_some_and(|t| t.starts_with("Call id")))
        .cloned()
        .unwrap_or_default();
    assert_eq!(obs["produced_by"], "t2");
    assert_eq!(
        s[3]["messages"][1]["role"], "user",
        "smolagents sends it as the user"
    );
}

#[test]
fn a_tool_result_written_into_the_prompt_in_another_form_is_not_dropped() {
    let out = json!([{"description": "Barcelona is a city on the northeastern coast of Spain, the capital of Catalonia.", "title": "Barcelona"}]);
    let steps = |assistant: String| {
        vec![
            obj(
                json!({"id": "m1", "kind": "llm", "input": [{"role": "user", "content": "Barcelona?"}]}),
            ),
            obj(json!({"id": "t", "kind": "tool", "tool": {"name": "Wikipedia"}, "output": out})),
            obj(json!({"id": "m2", "kind": "llm", "input": [
                {"role": "user", "content": "Barcelona?"},
                {"role": "assistant", "content": assistant}]})),
        ]
    };
    // Python's json.dumps of the result, found verbatim: a unit made by the tool.
    let dumped = python_json(&out, true);
    assert!(
        dumped.starts_with("[{\"description\": \"Barcelona"),
        "{dumped}"
    );
    let mut s = steps(format!("Thought: look it up.\nFunction Output: {dumped}"));
    let a = attach(&mut s);
    let found = a
        .units
        .iter()
        .find(|u| u["kind"] == "tool_result")
        .cloned()
        .unwrap_or_default();
    assert_eq!(found["produced_by"], "t");
    assert_eq!(found["text"], dumped.as_str());
    // Indented: not verbatim, but seen; and ReAct feeds back no tool messages: nothing dropped.
    let indented = serde_json::to_string_pretty(&out).unwrap_or_default();
    let mut s = steps(format!("Function Output: {indented}"));
    let a = attach(&mut s);
    assert!(
        a.units.iter().all(|u| u.get("at").is_some()),
        "{:#?}",
        a.units
    );
    assert!(s[2]["context"].get("available").is_none());
    assert_eq!(
        python_json(&json!({"k": "é\n"}), false),
        "{\"k\": \"é\\n\"}"
    );
    assert_eq!(python_json(&json!(["😀"]), true), "[\"\\ud83d\\ude00\"]");
}

#[test]
fn steps_without_recorded_input_are_left_alone() {
    let mut steps = vec![
        obj(json!({"id": "r", "kind": "retrieval", "documents": [{"text": DOC_1}]})),
        obj(json!({"id": "m", "kind": "llm", "output": "x"})),
        obj(json!({"id": "q", "kind": "llm", "input": {"query": "not a chat input"}})),
    ];
    let before = steps.clone();
    let a = attach(&mut steps);
    assert!(a.units.is_empty());
    assert_eq!(steps, before);
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-zA-Zäé€ :\\n]{0,40}".prop_map(Value::from),
        Just(Value::from("tool")),
        Just(Value::from("user")),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("role".to_owned()),
                        Just("content".to_owned()),
                        Just("parts".to_owned()),
                        Just("type".to_owned()),
                        Just("tool_call_id".to_owned()),
                        Just("messages".to_owned()),
                        "[a-z_]{1,8}"
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Documents (some pasted into prompts, some not) and prompts of any text: every place a unit
    /// is given slices its message's content to the unit's text, in characters.
    #[test]
    fn places_slice_the_message_to_the_unit_s_text(
        docs in prop::collection::vec("[a-zA-Zäöü€ 0-9.,\\n]{20,60}", 1..5),
        picks in prop::collection::vec((0usize..5, "[a-zé€ \\n]{0,12}"), 1..8),
        roles in prop::collection::vec(prop_oneof![Just("system"), Just("user"), Just("assistant"), Just("tool")], 1..4),
    ) {
        let documents: Vec<Value> = docs.iter().map(|d| json!({"text": d})).collect();
        let mut prompt = String::new();
        for (k, glue) in &picks {
            prompt.push_str(glue);
            if let Some(d) = docs.get(*k) {
                prompt.push_str(d);
            }
        }
        let msgs: Vec<Value> = roles
            .iter()
            .enumerate()
            .map(|(i, r)| json!({"role": r, "content": if i % 2 == 0 { prompt.clone() } else { format!("{i} {prompt} tail") }}))
            .collect();
        let mut steps = vec![
            obj(json!({"id": "r", "kind": "retrieval", "documents": documents})),
            obj(json!({"id": "m", "kind": "llm", "input": msgs})),
            obj(json!({"id": "m2", "kind": "llm", "input": [{"role": "user", "content": prompt}]})),
        ];
        let a = attach(&mut steps);
        prop_assert_eq!(check_places(&steps, &a.units), Ok(()));
        let ids: HashSet<&str> = a.units.iter().filter_map(|u| u["id"].as_str()).collect();
        prop_assert_eq!(ids.len(), a.units.len(), "ids are unique");
    }

    /// Whatever a model step's input, a document or a tool output holds, the pass does not
    /// panic and its places hold.
    #[test]
    fn any_input_is_read_without_a_panic(input in arb_json(), out in arb_json(), doc in arb_json()) {
        let mut steps = vec![
            obj(json!({"id": "r", "kind": "retrieval", "documents": [{"text": doc.to_string()}, doc]})),
            obj(json!({"id": "t", "kind": "tool", "tool": {"name": "f", "call_id": "c"}, "output": out})),
            obj(json!({"id": "m", "kind": "llm", "input": input})),
        ];
        let a = attach(&mut steps);
        prop_assert_eq!(check_places(&steps, &a.units), Ok(()));
    }
}

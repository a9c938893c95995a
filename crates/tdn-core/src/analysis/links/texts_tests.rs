use super::*;
use serde_json::{Value, json};

#[test]
fn one_string_is_one_leaf_and_texts_read_as_lines() {
    use crate::analysis::testutil::{RunBuilder, doc};
    let long = "x".repeat(LINK_SCAN_BYTES + 10);
    let run = RunBuilder::failed()
        .user("s1", "Refund ORD-1042")
        .llm("s2", json!({"thought": "look it up", "n": 1200}))
        .tool_ok(
            "s3",
            "get_order",
            json!({"id": "ORD-1042"}),
            json!(long.clone()),
        )
        .retrieval(
            "s4",
            "policy",
            vec![doc("d1", "Refunds take 5 days.", false)],
        )
        .llm("s5", json!(""))
        .build();
    let t = StepTexts::build(&run);
    assert_eq!(t.produced(0), "Refund ORD-1042");
    assert!(matches!(t.produced(0), Cow::Borrowed(_)));
    assert_eq!(t.produced(1), "look it up\n1200");
    let leaves: Vec<&str> = t.produced_text(1).leaves().collect();
    assert_eq!(leaves, ["look it up", "1200"]);
    assert_eq!(t.produced_text(1).len(), 15);
    assert_eq!(t.consumed(2), "ORD-1042");
    assert!(matches!(t.consumed(2), Cow::Borrowed(_)));
    assert_eq!(t.produced(2).len(), LINK_SCAN_BYTES);
    assert_eq!(t.produced(3), "d1\nRefunds take 5 days.");
    assert_eq!(t.produced(4), "");
    assert!(t.produced_text(4).is_empty());
    assert_eq!(t.consumed(3), "policy");
    assert_eq!(t.produced(9), "");
    // No leaf is a copy of the run's text but the number written out.
    assert_eq!(t.numbers, "1200");
}

/// Leaves that are strings and numbers, empty, long, with newlines and characters of
/// several bytes: the text is what [`flat_text`] joins, cut at the cap.
fn leaf() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    prop_oneof![
        2 => "[a-c \n\u{e9}\u{4e00}]{0,6}".prop_map(Value::String),
        1 => (0u64..100_000).prop_map(|n| json!(n)),
        1 => (-1000.0f64..1000.0).prop_map(|x| json!(x)),
        3 => (0usize..4, 0usize..3).prop_map(|(k, pad)| {
            // near the cap, so that the cap falls inside a leaf, on a newline or on a
            // character of several bytes
            let mut s = "y".repeat(LINK_SCAN_BYTES / 2 - 2 + k);
            s.push_str(&"\u{e9}".repeat(pad));
            Value::String(s)
        }),
        1 => Just(Value::Null),
        1 => Just(json!(true)),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    #[test]
    fn leaves_join_to_the_flat_text_cut_at_the_cap(
        parts in proptest::collection::vec(
            proptest::collection::vec(leaf(), 0..5), 1..5)
    ) {
        use crate::analysis::testutil::RunBuilder;
        let mut b = RunBuilder::failed();
        let mut want = Vec::new();
        for (k, p) in parts.iter().enumerate() {
            let v = Value::Array(p.clone());
            b = b.llm(&format!("s{k}"), v.clone());
            want.push(flat_text(&Json::from(v)));
        }
        let run = b.build();
        let t = StepTexts::build(&run);
        for (k, want) in want.iter().enumerate() {
            let text = t.produced_text(k);
            let joined = t.produced(k);
            proptest::prop_assert_eq!(&*joined, want.as_str());
            proptest::prop_assert_eq!(text.len(), want.len());
            let mut buf = String::from("stale");
            proptest::prop_assert_eq!(text.joined_in(&mut buf), want.as_str());
        }
    }
}

#[test]
fn units_follow_their_producer_in_the_run_order() {
    use crate::analysis::testutil::RunBuilder;
    let run = RunBuilder::failed()
        .llm("s1", json!("one"))
        .llm("s2", json!("two"))
        .llm("s3", json!("three"))
        .unit("u1", "tool_result", "first of s3", Some("s3"))
        .unit("u2", "tool_result", "first of s1", Some("s1"))
        .unit("u3", "memory", "no producer", None)
        .unit("u4", "tool_result", "second of s3", Some("s3"))
        .unit("u5", "tool_result", "of no step", Some("s9"))
        .build();
    let t = StepTexts::build(&run);
    assert_eq!(t.produced(0), "one\nfirst of s1");
    assert_eq!(t.produced(1), "two");
    assert_eq!(t.produced(2), "three\nfirst of s3\nsecond of s3");
}

#[test]
fn a_leaf_past_the_cap_leaves_only_its_newline() {
    use crate::analysis::testutil::RunBuilder;
    let first = "z".repeat(LINK_SCAN_BYTES - 1);
    let run = RunBuilder::failed()
        .llm("s1", json!([first.clone(), "more", 12345]))
        .llm("s2", json!([first.clone(), 12345, "more"]))
        .build();
    let t = StepTexts::build(&run);
    for k in 0..2 {
        let joined = t.produced(k);
        assert_eq!(joined.len(), LINK_SCAN_BYTES);
        assert_eq!(joined, format!("{first}\n"));
        assert_eq!(t.produced_text(k).leaves().count(), 2);
    }
    assert_eq!(t.numbers, "", "a number cut to nothing is not kept");
}

#[test]
fn flat_text_keeps_leaves_in_order_and_drops_keys() {
    let v = json!({"tool_call": {"name": "create_event", "arguments": {"start": "Friday", "n": 120, "ok": true}}});
    assert_eq!(flat_text(&Json::from(v)), "create_event\nFriday\n120");
}

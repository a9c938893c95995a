use super::*;
use crate::analysis::testutil::{TreeShape, json_tree};
use proptest::prelude::*;
use serde_json::json;

/// Arbitrary values: nested, unicode, escapes, big and negative integers, floats, repeated
/// keys (generated as text, below), empty arrays and objects.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        (-1e6..1e6_f64).prop_map(Value::from),
        "[a-c\u{e9}\u{1f600}\u{7}\u{202e}\"\\\\/\n\t]{0,6}".prop_map(Value::String),
    ];
    json_tree(
        leaf,
        || "[a-c\u{e9}\"]{0,2}",
        TreeShape {
            depth: 5,
            size: 64,
            branch: 8,
            array: 0..6,
            object: 0..12,
        },
    )
}

/// JSON text with objects whose keys may repeat (more than [`SCAN_LIMIT`] entries at times).
fn text_with_repeats() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        any::<i32>().prop_map(|n| n.to_string()),
        "[a-c]{0,3}".prop_map(|s| format!("\"{s}\"")),
        Just("1.5e300".to_owned()),
        Just("-0.0".to_owned()),
        Just("18446744073709551615".to_owned()),
    ];
    leaf.prop_recursive(4, 64, 20, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(("[a-d]{1}", inner), 0..20).prop_map(|kv| {
                let body: Vec<String> = kv.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", body.join(","))
            }),
        ]
    })
}

proptest! {
    #[test]
    fn it_writes_the_bytes_serde_json_writes(v in value()) {
        let j = Json::from(v.clone());
        prop_assert_eq!(serde_json::to_string(&j).unwrap(), serde_json::to_string(&v).unwrap());
        prop_assert_eq!(
            serde_json::to_string_pretty(&j).unwrap(),
            serde_json::to_string_pretty(&v).unwrap()
        );
        prop_assert_eq!(j.to_string(), v.to_string());
        prop_assert_eq!(format!("{j:#}"), format!("{v:#}"));
        prop_assert_eq!(j.to_value(), v.clone());
        prop_assert!(j == v);
    }

    #[test]
    fn it_reads_what_serde_json_reads(text in text_with_repeats()) {
        let theirs: Value = serde_json::from_str(&text).unwrap();
        let mine: Json = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(mine.to_value(), theirs.clone());
        prop_assert_eq!(mine.to_string(), theirs.to_string());
        prop_assert_eq!(serde_json::to_string_pretty(&mine).unwrap(), serde_json::to_string_pretty(&theirs).unwrap());
        prop_assert_eq!(Json::from(theirs), mine);
    }

    #[test]
    fn printed_and_read_back_it_is_the_same(v in value()) {
        let j = Json::from(v);
        let back: Json = serde_json::from_str(&j.to_string()).unwrap();
        prop_assert_eq!(back, j);
    }
}

#[test]
fn a_repeated_key_keeps_its_first_place_and_its_last_value() {
    let text = r#"{"b":1,"a":2,"b":3,"c":{"x":1,"x":[]}}"#;
    let j: Json = serde_json::from_str(text).unwrap();
    assert_eq!(j.to_string(), r#"{"b":3,"a":2,"c":{"x":[]}}"#);
    // Above the scanning size too: 20 keys, each twice.
    let keys: Vec<String> = (0..40).map(|i| format!("\"k{}\":{i}", i % 20)).collect();
    let text = format!("{{{}}}", keys.join(","));
    let j: Json = serde_json::from_str(&text).unwrap();
    let m = j.as_object().unwrap();
    assert_eq!(m.len(), 20);
    assert_eq!(m.keys().next(), Some("k0"));
    assert_eq!(m.get("k0").and_then(Json::as_u64), Some(20));
    assert_eq!(m.get("k19").and_then(Json::as_u64), Some(39));
    assert_eq!(j.to_value(), serde_json::from_str::<Value>(&text).unwrap());
}

#[test]
fn accessors_answer_as_values_do() {
    let j = Json::from(json!({"s": "x", "n": 3, "f": 2.5, "neg": -1, "a": [true, null], "o": {}}));
    assert_eq!(j["s"], "x");
    assert_eq!(j.get("s").and_then(Json::as_str), Some("x"));
    assert_eq!(j["n"].as_u64(), Some(3));
    assert_eq!(j["neg"].as_u64(), None);
    assert_eq!(j["neg"].as_i64(), Some(-1));
    assert_eq!(j["f"].as_f64(), Some(2.5));
    assert_eq!(j["a"].as_array().map(<[Json]>::len), Some(2));
    assert_eq!(j["a"][0].as_bool(), Some(true));
    assert!(j["a"][1].is_null() && j["a"][7].is_null() && j["missing"].is_null());
    assert!(j["o"].as_object().is_some_and(JsonMap::is_empty));
    assert_eq!(j.get("s").map(Json::is_string), Some(true));
    assert!(Json::from("x").get("s").is_none());
}

#[test]
fn objects_compare_as_maps_whatever_the_order() {
    let a = Json::from(json!({"x": 1, "y": 2}));
    let b: Json = serde_json::from_str(r#"{"y":2,"x":1}"#).unwrap();
    assert_eq!(a, b);
    assert_eq!(json!({"x": 1, "y": 2}), json!({"y": 2, "x": 1}));
    let big = |rev: bool| {
        let mut kv: Vec<(String, Value)> = (0..30).map(|i| (format!("k{i}"), json!(i))).collect();
        if rev {
            kv.reverse();
        }
        Json::from(Value::Object(kv.into_iter().collect()))
    };
    assert_eq!(big(false), big(true));
    assert_ne!(big(false), Json::from(json!({"k0": 0})));
    assert_ne!(Json::from(json!(1)), Json::from(json!(1.0)));
}

#[test]
fn non_finite_floats_are_null_as_in_a_value() {
    let v = Value::from(f64::NAN);
    assert_eq!(Json::from(v.clone()).to_string(), v.to_string());
    let j: Json = serde_json::from_str("[1e400]").unwrap_or_default();
    let w: Value = serde_json::from_str("[1e400]").unwrap_or_default();
    assert_eq!(j.to_value(), w);
}

#[test]
fn equal_short_keys_read_on_one_thread_share_one_allocation() {
    std::thread::spawn(|| {
        let long = "k".repeat(super::json_keys::MAX_KEY_LEN + 1);
        let text = format!(r#"[{{"role":1,"{long}":2}},{{"role":3,"{long}":4}}]"#);
        let read: Json = serde_json::from_str(&text).unwrap();
        let from_value = Json::from(serde_json::from_str::<Value>(&text).unwrap());
        let key = |j: &Json, item: usize, entry: usize| match &j[item] {
            Json::Object(m) => std::sync::Arc::clone(&m.entries[entry].0),
            _ => panic!("not an object"),
        };
        assert!(std::sync::Arc::ptr_eq(&key(&read, 0, 0), &key(&read, 1, 0)));
        assert!(std::sync::Arc::ptr_eq(
            &key(&read, 0, 0),
            &key(&from_value, 1, 0)
        ));
        assert!(!std::sync::Arc::ptr_eq(
            &key(&read, 0, 1),
            &key(&read, 1, 1)
        ));
        assert_eq!(&*key(&read, 1, 1), long);
        assert_eq!(read.to_value(), from_value.to_value());
    })
    .join()
    .unwrap();
}

//! Unit tests of the comparison on runs built step by step: the second run of each pair is the
//! first with its ids and times renamed (as any second recording has), and one thing changed.

use super::*;
use crate::analysis::model::{RunStatus, StepId, StepKind, Timestamp};
use crate::analysis::testutil::{RunBuilder, doc};
use serde_json::json;

/// A booking conversation: the user asks, the model looks up, asks for confirmation, the user
/// says yes, the model books. `p` prefixes every id.
fn booking(p: &str, status: RunStatus) -> RunBuilder {
    let id = |s: &str| format!("{p}{s}");
    RunBuilder::new(status)
        .tool_def("book", "books a flight", json!({}), true)
        .user(&id("u1"), "Book me the 9am flight to Boston on May 3, please.")
        .llm(&id("m1"), json!({"tool_calls": [{"id": format!("call_{p}Xy12AbCdEfGh34"), "name": "search", "arguments": "{\"to\": \"BOS\", \"date\": \"2024-05-03\"}"}]}))
        .tool_ok(&id("t1"), "search", json!({"to": "BOS", "date": "2024-05-03"}), json!([{"flight": "HA100", "time": "09:00"}]))
        .llm(&id("m2"), "I found HA100 at 09:00 on May 3. Shall I book it?")
        .user(&id("u2"), "Yes, go ahead.")
        .llm(&id("m3"), json!({"tool_calls": [{"name": "book", "arguments": {"flight": "HA100"}}]}))
        .tool_ok(&id("t2"), "book", json!({"flight": "HA100"}), "booked HA100")
        .llm(&id("m4"), "Done: HA100 is booked for May 3.")
        .answer("Done: HA100 is booked for May 3.")
}

/// Gives every step start and end times from `base`.
fn timed(mut run: Run, base: i64) -> Run {
    for (i, s) in run.steps.iter_mut().enumerate() {
        let t = base + 1000 * i as i64;
        s.extras_mut().started_at = Some(Timestamp(t));
        s.extras_mut().ended_at = Some(Timestamp(t + 7));
    }
    run
}

fn good() -> Run {
    timed(
        booking("a-", RunStatus::Succeeded).build(),
        1_700_000_000_000,
    )
}

/// The good run recorded again: other ids, other times, other call ids.
fn again() -> RunBuilder {
    booking("zz-", RunStatus::Failed)
}

fn bad(change: impl FnOnce(&mut Run)) -> Run {
    let mut run = timed(again().build(), 1_800_000_000_000);
    change(&mut run);
    run.reindex();
    run
}

fn at<'a>(run: &'a mut Run, id: &str) -> &'a mut Step {
    let i = run.step_index(id).unwrap();
    &mut run.steps[i]
}

#[test]
fn a_run_recorded_again_with_new_ids_and_times_does_the_same_thing() {
    let (g, b) = (good(), bad(|_| {}));
    let c = compare(&g, &b);
    assert_eq!(c.first_divergence, None);
    assert!(c.differences.is_empty(), "{:?}", c.differences);
    assert_eq!(c.rows.len(), g.steps.len());
    assert!(
        c.rows
            .iter()
            .all(|r| r.matched == Match::Same && r.good == r.bad)
    );
    assert_eq!(c.counts(), [g.steps.len(), 0, 0, 0]);
}

#[test]
fn a_changed_argument_is_the_first_divergence_and_names_its_key() {
    let (g, b) = (
        good(),
        bad(|r| {
            at(r, "zz-t1").tool.as_mut().unwrap().arguments =
                json!({"to": "BOS", "date": "2024-05-04"}).into();
        }),
    );
    let c = compare(&g, &b);
    let f = c.first_divergence.clone().unwrap();
    assert_eq!((f.good, f.bad), (Some(2), Some(2)));
    let d = c.divergence_difference().unwrap();
    assert_eq!((d.change, d.class), (Change::Argument, Class::Action));
    assert_eq!(d.key.as_deref(), Some("date"));
    assert_eq!(d.tool.as_deref(), Some("search"));
    assert_eq!(d.good_value.as_deref(), Some("2024-05-03"));
    assert_eq!(d.bad_value.as_deref(), Some("2024-05-04"));
    assert!(
        d.sentence().contains("argument 'date' of search"),
        "{}",
        d.sentence()
    );
    assert_eq!(c.rows[2].matched, Match::Changed);
    assert_eq!(c.row_of_bad(2), Some(2));
    assert_eq!(c.differences_at(2).len(), 1);
}

#[test]
fn a_changed_tool_result_is_the_first_divergence() {
    let (g, b) = (
        good(),
        bad(|r| at(r, "zz-t1").output = Some(json!([{"flight": "HA100", "time": "10:00"}]).into())),
    );
    let c = compare(&g, &b);
    let d = c.divergence_difference().unwrap();
    assert_eq!(d.change, Change::ToolResult);
    assert_eq!(d.key.as_deref(), Some("[0].time"));
    assert_eq!(c.first_divergence.as_ref().unwrap().bad, Some(2));
}

#[test]
fn a_call_made_without_the_confirmation_the_good_run_waited_for() {
    // The bad run books straight after the search: no question, no user reply.
    let g = good();
    let b = RunBuilder::failed()
        .tool_def("book", "books a flight", json!({}), true)
        .user("u1", "Book me the 9am flight to Boston on May 3, please.")
        .llm("m1", json!({"tool_calls": [{"name": "search", "arguments": {"to": "BOS", "date": "2024-05-03"}}]}))
        .tool_ok("t1", "search", json!({"to": "BOS", "date": "2024-05-03"}), json!([{"flight": "HA100", "time": "09:00"}]))
        .llm("m3", json!({"tool_calls": [{"name": "book", "arguments": {"flight": "HA100"}}]}))
        .tool_ok("t2", "book", json!({"flight": "HA100"}), "booked HA100")
        .llm("m4", "Done: HA100 is booked for May 3.")
        .answer("Done: HA100 is booked for May 3.")
        .build();
    let c = compare(&g, &b);
    let d = c.divergence_difference().unwrap();
    assert_eq!(d.change, Change::SkippedUserTurn, "{:?}", c.differences);
    assert_eq!(d.tool.as_deref(), Some("book"));
    let f = c.first_divergence.unwrap();
    // The bad run's booking call, against the good run's user reply.
    assert_eq!((f.bad, f.good), (Some(3), Some(4)));
    // The skipped question and reply are listed as messages only the good run sent.
    let skipped: Vec<usize> = c
        .differences
        .iter()
        .filter(|d| d.change == Change::Skipped)
        .filter_map(|d| d.good)
        .collect();
    assert_eq!(skipped, vec![3, 4]);
    assert!(
        c.differences
            .iter()
            .filter(|d| d.change == Change::Skipped)
            .all(|d| d.class == Class::Message)
    );
}

#[test]
fn the_same_facts_in_other_words_is_not_a_divergence_but_other_facts_are() {
    let b = bad(|r| {
        at(r, "zz-m2").output =
            Some(json!("Found it: flight HA100 leaves 09:00, May 3. Book it?").into());
    });
    let c = compare(&good(), &b);
    assert_eq!(c.first_divergence, None);
    assert_eq!(c.differences.len(), 1);
    assert_eq!(c.differences[0].class, Class::Wording);
    let b = bad(|r| {
        at(r, "zz-m2").output =
            Some(json!("I found HA200 at 11:00 on May 3. Shall I book it?").into());
    });
    let c = compare(&good(), &b);
    let d = c.divergence_difference().unwrap();
    assert_eq!((d.change, d.class), (Change::Message, Class::Message));
    assert_eq!(d.good_value.as_deref(), Some("09:00, ha100"));
    assert_eq!(d.bad_value.as_deref(), Some("11:00, ha200"));
}

#[test]
fn a_different_tool_at_the_same_point_is_named_with_both_tools() {
    let b = bad(|r| {
        let s = at(r, "zz-t1");
        s.tool.as_mut().unwrap().name = "search_web".to_owned();
    });
    let c = compare(&good(), &b);
    let d = c.divergence_difference().unwrap();
    assert_eq!(d.change, Change::Tool);
    assert_eq!(
        (d.good_value.as_deref(), d.bad_value.as_deref()),
        (Some("search"), Some("search_web"))
    );
}

#[test]
fn a_run_that_stops_early_diverges_where_it_stopped() {
    let mut b = again().build();
    b.steps.truncate(5);
    b.reindex();
    let c = compare(&good(), &b);
    let f = c.first_divergence.clone().unwrap();
    let d = c.divergence_difference().unwrap();
    assert_eq!(d.change, Change::Skipped);
    assert_eq!((f.good, f.bad), (Some(5), None));
    assert_eq!(c.counts(), [5, 0, 3, 0]);
}

#[test]
fn inside_containers_the_leaf_is_named_with_its_parents() {
    let nest = |run: &mut Run, p: &str| {
        let mut agent = Step::new(format!("{p}agent"), StepKind::Agent);
        agent.container = true;
        run.steps.insert(0, agent);
        for s in run.steps.iter_mut().skip(1) {
            s.parent = Some(StepId(format!("{p}agent")));
        }
        run.reindex();
    };
    let mut g = good();
    nest(&mut g, "a-");
    let b = bad(|r| {
        nest(r, "zz-");
        at(r, "zz-t2").output = Some(json!("booking failed: seat taken").into());
        // The container's own summary differs too: it is not where the runs part.
        at(r, "zz-agent").output = Some(json!("something else").into());
    });
    let c = compare(&g, &b);
    let f = c.first_divergence.clone().unwrap();
    assert_eq!(f.bad, Some(7));
    assert_eq!(parents(&b, 7), vec![0]);
    let j = serde_json::to_value(c.json(&g, &b)).unwrap();
    assert_eq!(j["first_divergence"]["bad"]["step"], "zz-t2");
    assert_eq!(
        j["first_divergence"]["bad"]["parents"][0]["step"],
        "zz-agent"
    );
    assert_eq!(j["first_divergence"]["good"]["index"], 7);
    assert_eq!(j["first_divergence"]["what"]["change"], "tool_result");
}

#[test]
fn documents_decisions_memory_and_errors_are_named() {
    let base = |p: &str| {
        RunBuilder::failed()
            .retrieval(
                &format!("{p}r"),
                "refund policy",
                vec![doc("policy-2024", "30 days", false)],
            )
            .decision(
                &format!("{p}d"),
                "refund",
                &[("refund", &[]), ("deny", &[])],
            )
            .mem_write(&format!("{p}m"), "customer", json!({"tier": "gold"}))
            .tool_ok(&format!("{p}t"), "refund", json!({"amount": 10}), "ok")
    };
    let g = base("a").build();
    let b = base("b")
        .with(|s| {
            s.output = None;
            s.error = Some("timeout".to_owned());
        })
        .build();
    let mut b2 = b.clone();
    b2.steps[0].documents = Some(vec![doc("policy-2019", "90 days", true)]);
    b2.steps[1].decision.as_mut().unwrap().chosen = "deny".to_owned();
    b2.steps[2].memory.as_mut().unwrap().value = json!({"tier": "silver"}).into();
    b2.reindex();
    let c = compare(&g, &b2);
    let changes: Vec<Change> = c.differences.iter().map(|d| d.change).collect();
    assert_eq!(
        changes,
        vec![
            Change::Document,
            Change::Decision,
            Change::Memory,
            Change::ToolResult,
            Change::Error
        ]
    );
    assert_eq!(c.differences[0].bad_value.as_deref(), Some("policy-2019"));
    assert_eq!(c.differences[2].key.as_deref(), Some("customer"));
    assert_eq!(c.first_divergence.unwrap().bad, Some(0));
}

#[test]
fn the_json_has_the_three_fields_and_null_when_nothing_differs() {
    let (g, b) = (good(), bad(|_| {}));
    let c = compare(&g, &b);
    let j = serde_json::to_value(c.json(&g, &b)).unwrap();
    let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["first_divergence", "aligned", "differences"]);
    assert!(j["first_divergence"].is_null());
    assert_eq!(
        j["aligned"][2],
        json!({"good": {"step": "a-t1", "index": 2}, "bad": {"step": "zz-t1", "index": 2}, "match": "same"})
    );
    assert_eq!(j["differences"], json!([]));
}

#[test]
fn hostile_runs_compare_without_panic_in_bounded_work() {
    // Steps that are nearly all alike (one repeated signature), 20,000 a side, and a run with
    // nothing in common: the alignment stays complete and the comparison finishes.
    let many = |n: usize, text: &str| {
        let mut b = RunBuilder::failed();
        for i in 0..n {
            b = b.llm(&format!("s{i}"), text);
        }
        b.build()
    };
    let (g, b) = (many(20_000, "same"), many(19_000, "same"));
    let c = compare(&g, &b);
    assert_eq!(c.rows.iter().filter(|r| r.good.is_some()).count(), 20_000);
    assert_eq!(c.rows.iter().filter(|r| r.bad.is_some()).count(), 19_000);
    let other = {
        let mut b = RunBuilder::failed();
        for i in 0..20_000 {
            b = b.tool_ok(
                &format!("t{i}"),
                &format!("tool{}", i % 7),
                json!({"i": i}),
                "x",
            );
        }
        b.build()
    };
    let c = compare(&g, &other);
    assert!(c.first_divergence.is_some());
    assert_eq!(c.rows.iter().filter(|r| r.bad.is_some()).count(), 20_000);
    // Empty runs.
    let empty = RunBuilder::failed().build();
    assert_eq!(compare(&empty, &empty).first_divergence, None);
    assert!(compare(&empty, &g).first_divergence.is_some());
}

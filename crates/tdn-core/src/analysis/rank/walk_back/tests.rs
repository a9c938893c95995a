//! The walk back on small runs: expected causes and numbers from docs/how-it-decides.md.

use super::*;
use crate::analysis::claims::check_claims;
use crate::analysis::links::{LinkGraph, StepTexts};
use crate::analysis::model::Run;
use crate::analysis::params::{WALK_BACK_NAMED, WALK_BACK_UNNAMED, WALK_BACK_USER_VALUE};
use crate::analysis::testutil::{RunBuilder, doc};
use serde_json::json;

fn walk(run: &Run) -> Vec<Walked> {
    let texts = StepTexts::build(run);
    let links = LinkGraph::build(run, &texts);
    let claims = check_claims(run, &texts);
    let facts = Facts::new(run, &texts, &links, &claims);
    walk_back(&facts, crate::analysis::detect::detect_all(&facts))
}

fn find(w: &[Walked], step: usize, cat: Category) -> &Walked {
    w.iter()
        .find(|x| x.finding.step == step && x.finding.category == cat)
        .unwrap_or_else(|| panic!("no {cat:?} at {step}: {w:#?}"))
}

#[test]
fn a_value_named_by_the_error_blames_its_model_step_at_0_88() {
    let run = RunBuilder::failed()
        .user("s1", "Book a call next Friday")
        .llm(
            "s2",
            json!({"tool_call": {"arguments": {"start": "Friday"}}}),
        )
        .tool_err(
            "s3",
            "create_event",
            json!({"start": "Friday"}),
            "invalid start: 'Friday' is not a date-time",
        )
        .build();
    let w = walk(&run);
    let root = find(&w, 1, Category::WrongValue);
    assert_eq!(root.finding.confidence, WALK_BACK_NAMED);
    assert_eq!(root.role, Role::RootCause);
    assert_eq!(root.finding.detector.as_str(), "tool_errors");
    assert_eq!(
        root.finding.evidence[0],
        "its output flows into step 's3' (position 3), where the failure surfaced"
    );
    let symptom = find(&w, 2, Category::ToolError);
    assert_eq!((symptom.role, symptom.cause), (Role::Symptom, Some(1)));
}

#[test]
fn an_error_about_the_input_that_does_not_name_it_blames_the_model_at_0_7() {
    let run = RunBuilder::failed()
        .llm("s1", json!({"date": "2026-13-45"}))
        .tool_err(
            "s2",
            "create_event",
            json!({"date": "2026-13-45"}),
            "400 Bad Request: invalid date",
        )
        .build();
    let w = walk(&run);
    assert_eq!(
        find(&w, 0, Category::WrongValue).finding.confidence,
        WALK_BACK_UNNAMED
    );
}

#[test]
fn valid_arguments_and_an_unrelated_error_blame_the_service() {
    let run = RunBuilder::failed()
        .tool_def(
            "get_order",
            "",
            json!({"type": "object", "properties": {"id": {"type": "string"}}}),
            false,
        )
        .llm("s1", json!({"id": "ORD-1042"}))
        .tool_err(
            "s2",
            "get_order",
            json!({"id": "ORD-1042"}),
            "upstream timed out (504)",
        )
        .build();
    let w = walk(&run);
    let s = find(&w, 1, Category::ServiceError);
    assert_eq!(s.finding.confidence, SERVICE_ERROR);
    assert_eq!((s.role, s.cause), (Role::Suspect, None));
    assert!(w.iter().all(|x| x.finding.category != Category::WrongValue));
}

#[test]
fn the_earliest_flagged_upstream_step_is_the_root_cause() {
    let run = RunBuilder::failed()
        .retrieval(
            "s1",
            "refund",
            vec![doc(
                "p23",
                "Annual plans are refunded $120 within 30 days.",
                true,
            )],
        )
        .llm_io("s2", "policy says $120", "So the refund is $120.")
        .llm_io(
            "s3",
            "So the refund is $120.",
            "You will get a refund of $120.",
        )
        .answer("You will get a refund of $120.")
        .build();
    let w = walk(&run);
    let root = find(&w, 0, Category::OutdatedSource);
    assert_eq!(root.role, Role::RootCause);
    let claim = find(&w, 1, Category::StaleClaim);
    assert_eq!((claim.role, claim.cause), (Role::Symptom, Some(0)));
}

#[test]
fn a_symptom_with_nothing_upstream_stays_a_suspect() {
    let run = RunBuilder::failed()
        .llm("s1", "The moon is made of cheese.")
        .answer("The moon is made of cheese.")
        .build();
    let w = walk(&run);
    let f = find(&w, 0, Category::UnsupportedClaim);
    assert_eq!((f.role, f.cause), (Role::Suspect, None));
}

#[test]
fn a_long_chain_is_walked_in_one_pass() {
    let mut b = RunBuilder::failed().retrieval(
        "s0",
        "q",
        vec![doc("d", "Order ORD-55501 ships on 2026-01-02.", true)],
    );
    for i in 1..5_000 {
        b = b.llm_io(&format!("s{i}"), "ORD-55501 again", "ORD-55501 again");
    }
    let run = b
        .tool_err(
            "last",
            "ship",
            json!({"id": "ORD-55501"}),
            "order ORD-55501 not found",
        )
        .build();
    let w = walk(&run);
    let last = run.steps.len() - 1;
    let symptom = find(&w, last, Category::ToolError);
    assert_eq!(
        symptom.cause,
        Some(0),
        "the outdated retrieval at the head of the chain"
    );
}

#[test]
fn a_complaint_about_something_else_with_arguments_the_schema_accepts_blames_the_service() {
    let schema = json!({"type": "object", "required": ["customer_id"],
                        "properties": {"customer_id": {"type": "string"}}});
    let build = |error: &str| {
        RunBuilder::failed()
            .tool_def("get_customer", "", schema.clone(), false)
            .llm(
                "s1",
                json!({"tool_call": {"name": "get_customer", "arguments": {"customer_id": "CUS-1182"}}}),
            )
            .tool_err("s2", "get_customer", json!({"customer_id": "CUS-1182"}), error)
            .build()
    };
    let w = walk(&build("401 Unauthorized: invalid API key"));
    assert!(w.iter().all(|x| x.finding.category != Category::WrongValue));
    find(&w, 1, Category::ServiceError);
    // Naming an argument's key, or rejecting the request as a whole, is about the input.
    for error in ["invalid customer id", "400 Bad Request: invalid"] {
        let w = walk(&build(error));
        find(&w, 0, Category::WrongValue);
    }
}

/// A booking issued by a model step, with no tool schemas (as imported τ-bench runs are).
fn booking(error: &str) -> Run {
    let args = json!({
        "user_id": "mia_li_3668",
        "flights": [{"flight_number": "HAT136", "date": "2024-05-20"}],
        "payment_methods": [
            {"payment_id": "certificate_7504069", "amount": 250},
            {"payment_id": "credit_card_4421486", "amount": 5}
        ]
    });
    RunBuilder::failed()
        .user(
            "u1",
            "Book HAT136 for me; use my certificate first, then my card.",
        )
        .llm(
            "m1",
            json!({"tool_calls": [{"name": "book_reservation", "arguments": args.clone()}]}),
        )
        .tool_err("t1", "book_reservation", args, error)
        .build()
}

#[test]
fn a_business_rule_rejection_about_the_requests_content_blames_the_model() {
    // The error names no argument value, but talks about the payment amounts (a key of the
    // arguments, two levels down) and quotes their sum.
    let w = walk(&booking(
        "Error: payment amount does not add up, total price is 305, but paid 255",
    ));
    let root = find(&w, 1, Category::WrongValue);
    assert_eq!(root.role, Role::RootCause);
    assert_eq!(root.finding.confidence, WALK_BACK_UNNAMED);
    let ev = root.finding.evidence.join("\n");
    assert!(ev.contains("'255'") && ev.contains("'amount'"), "{ev}");
    assert!(ev.contains("250 + 5"), "{ev}");
    assert!(
        w.iter()
            .all(|x| x.finding.category != Category::ServiceError)
    );
    // The kind of value the request used ("gift card" of 'gift_card_…'), a key alone.
    for error in [
        "Error: certificate cannot be used to update reservation",
        "Error: the amount exceeds the limit",
    ] {
        let w = walk(&booking(error));
        find(&w, 1, Category::WrongValue);
    }
}

#[test]
fn infrastructure_failures_stay_with_the_service_even_when_they_name_the_request() {
    for error in [
        "Error: upstream timed out while booking HAT136",
        "503 Service Unavailable: payment amount service down",
        "502 Bad Gateway",
        "connection refused by payments.example:443",
        "429 Too Many Requests: rate limit exceeded for mia_li_3668",
        "401 Unauthorized: invalid API key",
    ] {
        let w = walk(&booking(error));
        find(&w, 2, Category::ServiceError);
        assert!(
            w.iter().all(|x| x.finding.category != Category::WrongValue),
            "{error}: {w:#?}"
        );
    }
}

#[test]
fn an_error_that_mentions_nothing_of_the_request_still_blames_the_service() {
    let w = walk(&booking("Error: something went wrong, try again later"));
    find(&w, 2, Category::ServiceError);
    // A number that is no sum of the arguments is not a mention of them.
    let w = walk(&booking("Error: code 9731"));
    find(&w, 2, Category::ServiceError);
}

#[test]
fn a_rule_refusing_the_request_blames_the_decision_that_made_it() {
    // The error names no argument, key or kind of value; it refuses what was asked.
    let w = walk(&booking("Error: non-delivered order cannot be exchanged"));
    let root = find(&w, 1, Category::WrongValue);
    let ev = root.finding.evidence.join("\n");
    assert!(
        ev.contains("refuses the request itself ('cannot be')"),
        "{ev}"
    );
    assert!(
        w.iter()
            .all(|x| x.finding.category != Category::ServiceError)
    );
}

#[test]
fn a_root_behind_many_failures_describes_three_and_counts_the_rest() {
    let mut b = RunBuilder::failed()
        .user("s1", "Book a call next Friday")
        .llm(
            "s2",
            json!({"tool_call": {"arguments": {"start": "Friday"}}}),
        );
    for i in 0..10 {
        b = b.tool_err(
            &format!("t{i}"),
            "create_event",
            json!({"start": "Friday"}),
            "invalid start: 'Friday' is not a date-time",
        );
    }
    let run = b.build();
    let w = walk(&run);
    let root = find(&w, 1, Category::WrongValue);
    let ev = &root.finding.evidence;
    let flows: Vec<&String> = ev
        .iter()
        .filter(|l| l.starts_with("its output flows into"))
        .collect();
    // Steps t0..t2 sit at positions 3..5: described in full.
    assert_eq!(flows.len(), 3, "{ev:#?}");
    assert!(flows[0].contains("'t0' (position 3)"), "{ev:#?}");
    assert!(flows[2].contains("'t2' (position 5)"), "{ev:#?}");
    // The other seven are counted on one line, the first five named.
    let more: Vec<&String> = ev
        .iter()
        .filter(|l| l.starts_with("its output also flows into"))
        .collect();
    assert_eq!(more.len(), 1, "{ev:#?}");
    assert!(
        more[0].starts_with("its output also flows into 7 more failed steps: step 't3'"),
        "{}",
        more[0]
    );
    assert!(more[0].ends_with(" and 2 more"), "{}", more[0]);
    assert!(
        more[0].contains("'t7'") && !more[0].contains("'t8'"),
        "{}",
        more[0]
    );
}

/// A change that failed, retried by the next decision with other arguments on the same order.
fn retried_change(mutates: bool) -> Run {
    let first = json!({"order_id": "#W1845024", "item_ids": ["1340995114", "7493556126"], "new_item_ids": []});
    let retry = json!({"order_id": "#W1845024", "item_ids": ["1340995114", "7493556126"], "new_item_ids": ["1340995114", "7493556126"]});
    // Unmarked, the tool's name says nothing of a change either.
    let tool = if mutates { "modify_items" } else { "items" };
    RunBuilder::failed()
        .tool_def(
            tool,
            "Swap items of a pending order.",
            serde_json::Value::Null,
            mutates,
        )
        .user(
            "u1",
            "Remove the keyboard and the headphones from order #W1845024.",
        )
        .llm(
            "m1",
            json!({"tool_calls": [{"name": tool, "arguments": first.clone()}]}),
        )
        .tool_err(
            "t1",
            tool,
            first,
            "Error: the number of items to be exchanged should match",
        )
        .llm(
            "m2",
            json!({"tool_calls": [{"name": tool, "arguments": retry.clone()}]}),
        )
        .tool_err(
            "t2",
            tool,
            retry,
            "Error: new item 1340995114 not found or available",
        )
        .build()
}

#[test]
fn a_failed_change_retried_on_the_same_thing_blames_the_first_attempt() {
    let w = walk(&retried_change(true));
    // The retry's error names the item the second decision wrote, yet its cause is the first
    // attempt's decision: no finding of its own on the retry.
    let root = find(&w, 1, Category::WrongValue);
    assert_eq!(root.role, Role::RootCause);
    let ev = root.finding.evidence.join("\n");
    assert!(ev.contains("the retry by step 'm2' (position 4)"), "{ev}");
    assert!(
        ev.contains("failed again at step 't2' (position 5)"),
        "{ev}"
    );
    let retry = find(&w, 4, Category::ToolError);
    assert_eq!((retry.role, retry.cause), (Role::Symptom, Some(1)));
    assert!(
        w.iter()
            .all(|x| !(x.finding.step == 3 && x.finding.category == Category::WrongValue))
    );
}

#[test]
fn a_retry_of_a_call_that_changes_nothing_is_judged_on_its_own() {
    let w = walk(&retried_change(false));
    let retry = find(&w, 3, Category::WrongValue);
    assert_eq!(retry.finding.confidence, WALK_BACK_NAMED);
}

/// A look-up of the address the user gave that matched nothing, then (with `search_on`) the
/// user's name and zip code, which found the account.
fn lookup(search_on: bool) -> Run {
    let email = json!({"email": "fatima_taylor_3452@example.com"});
    let name = json!({"first_name": "Fatima", "last_name": "Taylor", "zip": "32169"});
    let b = RunBuilder::failed()
        .user(
            "u1",
            "Update my address. My email is fatima_taylor_3452@example.com.",
        )
        .llm(
            "m1",
            json!({"tool_calls": [{"name": "find_user_id_by_email", "arguments": email.clone()}]}),
        )
        .tool_err(
            "t1",
            "find_user_id_by_email",
            email,
            "Error: user not found",
        );
    if !search_on {
        return b.build();
    }
    b.llm(
        "m2",
        "I could not find that email. Your name and zip code, please?",
    )
    .user("u2", "Fatima Taylor, 32169.")
    .llm(
        "m3",
        json!({"tool_calls": [{"name": "find_user_id_by_name_zip", "arguments": name.clone()}]}),
    )
    .tool_ok("t2", "find_user_id_by_name_zip", name, "fatima_taylor_3452")
    .build()
}

#[test]
fn a_failed_look_up_of_what_the_user_gave_is_a_weak_suspect_and_no_cause_once_the_search_went_on() {
    // Alone, the look-up of the user's address is a weak suspect.
    let w = walk(&lookup(false));
    let weak = find(&w, 1, Category::WrongValue);
    assert_eq!(weak.finding.confidence, WALK_BACK_USER_VALUE);
    // Found another way after the user gave more: the failed try is no finding at all.
    let w = walk(&lookup(true));
    assert!(w.iter().all(|x| x.finding.step > 2), "{w:#?}");
}

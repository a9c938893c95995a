//! Claim labels and origins on small runs; expected labels follow the rules of
//! docs/how-it-decides.md, "Claims".

use super::*;
use crate::analysis::testutil::{RunBuilder, doc};
use serde_json::json;

fn check(run: &Run) -> Vec<CheckedClaim> {
    check_claims(run, &StepTexts::build(run))
}

fn labels(run: &Run) -> Vec<SupportLabel> {
    check(run).into_iter().map(|c| c.label).collect()
}

fn friday() -> Run {
    RunBuilder::failed()
        .tool_def("create_event", "", json!(null), true)
        .user("s1", "Book a 30 minute call with Dana next Friday at 10")
        .llm(
            "s2",
            json!({"tool_call": {"name": "create_event", "arguments": {"start": "Friday"}}}),
        )
        .tool_err(
            "s3",
            "create_event",
            json!({"start": "Friday"}),
            "invalid start: 'Friday' is not a date-time",
        )
        .llm("s4", "Your call with Dana is booked.")
        .answer("Your call with Dana is booked.")
        .build()
}

#[test]
fn a_failed_booking_contradicts_the_claim_that_it_was_booked() {
    let c = check(&friday());
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].label, SupportLabel::Contradicted);
    assert_eq!(c[0].evidence_step, Some(2));
    assert_eq!(c[0].origin_step, Some(3));
    assert!(c[0].action);
}

#[test]
fn a_successful_booking_supports_it_and_a_request_alone_does_not() {
    let ok = RunBuilder::succeeded()
        .tool_def("create_event", "", json!(null), true)
        .user("s1", "Book a call with Dana on Friday")
        .tool_ok(
            "s2",
            "create_event",
            json!({"start": "2026-11-06T10:00:00Z", "title": "Call with Dana"}),
            json!({"id": "evt_81"}),
        )
        .answer("Your call with Dana is booked.")
        .build();
    assert_eq!(labels(&ok), vec![SupportLabel::Supported]);
    let no_call = RunBuilder::failed()
        .user("s1", "Book a call with Dana on Friday")
        .answer("Your call with Dana is booked.")
        .build();
    assert_eq!(labels(&no_call), vec![SupportLabel::Unsupported]);
}

#[test]
fn only_an_outdated_source_makes_a_claim_stale() {
    let stale = RunBuilder::failed()
        .user("s1", "How much is the refund for my annual plan?")
        .retrieval(
            "s2",
            "annual plan refund",
            vec![doc(
                "policy-2023",
                "Annual plans cancelled within 30 days are refunded $120.",
                true,
            )],
        )
        .answer("You will get a refund of $120.")
        .build();
    let c = check(&stale);
    assert_eq!(c[0].label, SupportLabel::Stale);
    assert_eq!(c[0].evidence_step, Some(1));
    let current = RunBuilder::failed()
        .retrieval(
            "s1",
            "annual plan refund",
            vec![
                doc(
                    "policy-2023",
                    "Annual plans cancelled within 30 days are refunded $120.",
                    true,
                ),
                doc(
                    "policy-2025",
                    "Annual plans cancelled within 30 days are refunded $120 minus fees.",
                    false,
                ),
            ],
        )
        .answer("You will get a refund of $120.")
        .build();
    assert_eq!(labels(&current), vec![SupportLabel::Supported]);
}

#[test]
fn a_close_source_with_another_number_contradicts() {
    let run = RunBuilder::failed()
        .retrieval(
            "s1",
            "refund",
            vec![doc(
                "p",
                "Annual plan refunds are $80 within 30 days.",
                false,
            )],
        )
        .answer("Annual plan refunds are $120.")
        .build();
    let c = check(&run);
    assert_eq!(c[0].label, SupportLabel::Contradicted);
    assert_eq!(c[0].evidence_step, Some(0));
    let no_number = RunBuilder::failed()
        .retrieval(
            "s1",
            "refund",
            vec![doc(
                "p",
                "Annual plan refunds are handled by billing.",
                false,
            )],
        )
        .answer("Annual plan refunds are $120.")
        .build();
    assert_ne!(labels(&no_number), vec![SupportLabel::Contradicted]);
}

#[test]
fn partial_unsupported_and_no_claim() {
    let run = RunBuilder::failed()
        .tool_ok("s1", "get_order", json!({"id": "ORD-1042"}), json!({"id": "ORD-1042", "status": "shipped", "carrier": "UPS"}))
        .answer("Order ORD-1042 shipped with FedEx yesterday. The moon is made of cheese. Is there anything else I can help with? Thanks for your patience!")
        .build();
    assert_eq!(
        labels(&run),
        vec![
            SupportLabel::Partial,
            SupportLabel::Unsupported,
            SupportLabel::NoClaim,
            SupportLabel::NoClaim
        ]
    );
}

#[test]
fn the_origin_is_the_earliest_model_step_that_held_the_claim() {
    let run = RunBuilder::failed()
        .retrieval("s1", "q", vec![doc("d", "Refunds are $120.", true)])
        .llm(
            "s2",
            "Thinking: the refund for the annual plan is $120 per the policy.",
        )
        .llm("s3", "You will get a refund of $120.")
        .answer("You will get a refund of $120.")
        .build();
    assert_eq!(check(&run)[0].origin_step, Some(1));
    let none = RunBuilder::failed()
        .llm("s1", "Let me look that up.")
        .answer("You will get a refund of $120.")
        .build();
    assert_eq!(check(&none)[0].origin_step, None);
}

#[test]
fn no_final_answer_means_no_claims() {
    assert!(check(&RunBuilder::failed().user("s1", "hi").build()).is_empty());
}

#[test]
fn a_bare_done_is_a_claim_of_an_action_and_a_tool_name_is_not_its_origin() {
    let run = RunBuilder::failed()
        .tool_def("schedule_meeting", "", json!(null), true)
        .llm("s1", json!({"tool_calls": [{"name": "schedule_meeting", "arguments": {"when": "11/06 3pm"}}]}))
        .tool_err("s2", "schedule_meeting", json!({"when": "11/06 3pm"}), "could not parse datetime")
        .llm("s3", "Done! Your meeting is scheduled.")
        .answer("Done! Your meeting is scheduled.")
        .build();
    let c = check(&run);
    assert_eq!(
        c.iter()
            .map(|c| (c.label, c.evidence_step, c.origin_step))
            .collect::<Vec<_>>(),
        vec![
            (SupportLabel::Contradicted, Some(1), Some(2)),
            (SupportLabel::Contradicted, Some(1), Some(2))
        ]
    );
}

/// "Done!" alone, after several state-changing calls, is about the last: the job it finished.
#[test]
fn a_bare_done_after_several_calls_is_checked_against_the_last() {
    let calls = |first_ok: bool, last_ok: bool| {
        let b = RunBuilder::failed()
            .tool_def("create_dataset", "", json!(null), true)
            .tool_def("add_examples", "", json!(null), true);
        let b = if first_ok {
            b.tool_ok("s1", "create_dataset", json!({"name": "golden"}), "created")
        } else {
            b.tool_err(
                "s1",
                "create_dataset",
                json!({"name": "golden"}),
                "name taken",
            )
        };
        let b = if last_ok {
            b.tool_ok("s2", "add_examples", json!({"span": "a1"}), "added 1")
        } else {
            b.tool_err("s2", "add_examples", json!({"span": "a1"}), "no such span")
        };
        let run = b.llm("s3", "Done!").answer("Done!").build();
        let c = check(&run);
        (c[0].label, c[0].evidence_step)
    };
    assert_eq!(calls(false, true), (SupportLabel::Supported, Some(1)));
    assert_eq!(calls(true, false), (SupportLabel::Contradicted, Some(1)));
    assert_eq!(calls(true, true), (SupportLabel::Supported, Some(1)));
}

#[test]
fn a_general_statement_with_a_success_word_is_not_a_claim_of_an_action() {
    let run = RunBuilder::failed()
        .tool_def("send_email", "", json!(null), true)
        .tool_ok(
            "s1",
            "fetch",
            json!({"url": "https://x.example"}),
            "Invoices are issued on the 1st of each month.",
        )
        .tool_err(
            "s2",
            "send_email",
            json!({"to": "a@b.example"}),
            "smtp down",
        )
        .answer("Invoices are issued on the 1st of each month.")
        .build();
    let c = check(&run);
    assert_eq!(
        (c[0].label, c[0].evidence_step, c[0].action),
        (SupportLabel::Supported, Some(0), false)
    );
}

#[test]
fn a_claim_that_something_was_not_found_rests_on_the_empty_search() {
    let run = RunBuilder::failed()
        .retrieval("s1", "BX-200 warranty", vec![])
        .answer("Sorry, I could not find the warranty terms for the BX-200.")
        .build();
    let c = check(&run);
    assert_eq!(
        (c[0].label, c[0].evidence_step),
        (SupportLabel::Supported, Some(0))
    );
    let positive = RunBuilder::failed()
        .retrieval("s1", "BX-200 warranty", vec![])
        .answer("The BX-200 warranty terms run for two years.")
        .build();
    assert_ne!(check(&positive)[0].label, SupportLabel::Supported);
}

#[test]
fn wishes_are_pleasantries_unless_they_hold_a_number() {
    let run = RunBuilder::failed()
        .answer("Enjoy your visit! Have a great day. Enjoy the 20% discount on ORD-77.")
        .build();
    assert_eq!(
        labels(&run),
        vec![
            SupportLabel::NoClaim,
            SupportLabel::NoClaim,
            SupportLabel::Unsupported
        ]
    );
}

#[test]
fn claims_of_actions_found_by_their_wording_are_checked_against_the_calls() {
    let build = |answer: &str| {
        RunBuilder::failed()
            .tool_def("book_room", "Reserve a meeting room", json!(null), true)
            .user("s1", "Book room Orion for 2026-06-02.")
            .tool_err(
                "s2",
                "book_room",
                json!({"room": "Orion", "date": "2026-06-02"}),
                "409 Conflict",
            )
            .answer(answer)
            .build()
    };
    // "is booked" about a named room: contradicted by the failed call, not supported by the
    // user's request.
    let c = check(&build("Room Orion is booked for 2026-06-02."));
    assert_eq!(
        (c[0].label, c[0].evidence_step, c[0].action),
        (SupportLabel::Contradicted, Some(1), true)
    );
    // "could not book": a negated action, supported by the failed call.
    let c = check(&build("I could not book room Orion."));
    assert_eq!(
        (c[0].label, c[0].evidence_step, c[0].action),
        (SupportLabel::Supported, Some(1), true)
    );
    // A general negation is not a claim about a call.
    let c = check(&build("Room Orion does not open before noon."));
    assert!(!c[0].action);
    assert_ne!(c[0].evidence_step, Some(1));
}

#[test]
fn a_system_message_after_the_last_decision_is_no_source() {
    let system = |id: &str, text: &str| {
        let mut s = crate::analysis::model::Step::new(id, crate::analysis::model::StepKind::System);
        s.output = Some(json!(text).into());
        s
    };
    let answer = "The last train leaves at 5:30 PM.";
    // A termination notice repeating the answer, after the last model step.
    let after = RunBuilder::failed()
        .user("s1", "When does the last train leave?")
        .llm("s2", answer)
        .step(system(
            "s3",
            "Max rounds reached. FINAL ANSWER: the last train leaves at 5:30 PM.",
        ))
        .answer(answer)
        .build();
    assert_eq!(labels(&after), vec![SupportLabel::Unsupported]);
    // The same words as an instruction before the decision are a source.
    let before = RunBuilder::failed()
        .step(system("s0", "The last train leaves at 5:30 PM."))
        .user("s1", "When does the last train leave?")
        .llm("s2", answer)
        .answer(answer)
        .build();
    assert_eq!(labels(&before), vec![SupportLabel::Supported]);
}

//! Systematic labelling errors found by reading the claims of real final answers (customer
//! service and multi-agent runs), each pinned with a general case: offers, requests, courtesy
//! and lead-ins are no claim; list markers, code and abbreviations are not claims; the agent's
//! instructions are evidence; a claim of an action is checked only against a call doing that
//! action; a number contradicts only a number of the same thing. Labels follow
//! docs/how-it-decides.md, "Claims".

use super::*;
use crate::analysis::testutil::RunBuilder;
use serde_json::json;

fn check(run: &Run) -> Vec<CheckedClaim> {
    check_claims(run, &StepTexts::build(run))
}

fn label_of(answer: &str) -> Vec<(String, SupportLabel)> {
    let run = RunBuilder::failed()
        .user("u1", "I need to change my flight.")
        .tool_ok(
            "t1",
            "get_reservation_details",
            json!({"reservation_id": "ABC123"}),
            json!({"reservation_id": "ABC123", "origin": "JFK", "destination": "SEA"}),
        )
        .answer(answer)
        .build();
    check(&run).into_iter().map(|c| (c.text, c.label)).collect()
}

fn no_claim(answer: &str) -> bool {
    let l = label_of(answer);
    !l.is_empty() && l.iter().all(|(_, x)| *x == SupportLabel::NoClaim)
}

#[test]
fn offers_requests_courtesy_and_lead_ins_are_no_claim() {
    for line in [
        "If you have any more questions or need further assistance, feel free to ask!",
        "If there's anything else you need assistance with, feel free to let me know!",
        "If you need any assistance in the future, don't hesitate to reach out.",
        "Feel free to reach out whenever you're ready to proceed or if you have any other questions.",
        "I understand your concern.",
        "I'm truly sorry to hear about your loss.",
        "No problem at all!",
        "Take your time",
        "Please hold on for a moment while I connect you.",
        "I can transfer you to a human agent who may be able to assist you further.",
        "However, I can transfer you to a human agent who may be able to assist you further.",
        "If you believe there is an error, I recommend contacting a human agent for further assistance.",
        "I will transfer you to a human agent who may be able to assist you further with your request.",
        "I'll be here whenever you're ready to proceed.",
        "Here are the details:",
        "The details are as follows:",
        "Payment:**",
        "### Return Flights",
        "I hope the situation is resolved soon and that you have a safe and pleasant journey.",
        "Computer_terminal, please execute the corrected code above.",
        "Let's first install the package with the package manager.",
    ] {
        assert!(no_claim(line), "{line}: {:?}", label_of(line));
    }
}

#[test]
fn statements_with_content_stay_claims() {
    for line in [
        "I can confirm that reservation ABC123 is booked.",
        "Sorry, I could not find your booking.",
        "You can take a total of 4 free checked bags.",
        "Please note that the fare is non-refundable.",
        "I understand that your flight from JFK to SEA was delayed by 3 hours.",
        "I'm sorry, but the reservation ABC123 cannot be changed.",
        "Otherwise, I can proceed with issuing the $50 certificate for the delay.",
        "The following actions have been completed:",
        "One Checked Bag Added",
        "Your reservation ABC123 goes from JFK to SEA.",
    ] {
        assert!(!no_claim(line), "{line}: {:?}", label_of(line));
    }
    // A greeting to someone by name is still a pleasantry.
    assert!(no_claim("Thanks, Dana!"));
}

#[test]
fn list_markers_code_and_abbreviations_do_not_make_claims() {
    let claims: Vec<String> = split_claims(
        "Here is the plan.\n1. Ship it to St. Louis today.\n2.\n```python\nimport requests\nprint(1)\n```\nSusan L. Smith signed it.",
    );
    assert_eq!(
        claims,
        vec![
            "Here is the plan.",
            "Ship it to St. Louis today.",
            "Susan L. Smith signed it."
        ]
    );
}

#[test]
fn a_coordinated_that_clause_is_not_split_off() {
    assert_eq!(
        split_claims("I checked the records and that the fare was paid in full."),
        vec!["I checked the records and that the fare was paid in full."]
    );
    assert_eq!(
        split_claims("Your call with Dana is booked and an invite was sent."),
        vec!["Your call with Dana is booked", "an invite was sent."]
    );
}

fn with_policy(answer: &str) -> Run {
    RunBuilder::failed()
        .step({
            let mut s = crate::analysis::model::Step::new("sys", StepKindAlias::System);
            s.output = Some(json!(
                "# Policy\n- The refund will go to original payment methods in 5 to 7 business days.\n- Each extra baggage is 50 dollars."
            ).into());
            s
        })
        .user("u1", "Cancel my trip please.")
        .answer(answer)
        .build()
}

use crate::analysis::model::StepKind as StepKindAlias;

#[test]
fn the_agents_instructions_are_evidence_for_what_they_say() {
    let c = check(&with_policy(
        "The refund will be processed to your original payment method within 5 to 7 business days.",
    ));
    assert_eq!(
        (c[0].label, c[0].evidence_step),
        (SupportLabel::Supported, Some(0))
    );
    assert!(c[0].why.contains("instructions"), "{}", c[0].why);
    // They never show that something was done.
    let c = check(&with_policy(
        "Your refund has been issued to your original payment method.",
    ));
    assert_ne!(c[0].label, SupportLabel::Supported);
}

#[test]
fn a_negated_action_is_checked_only_against_a_call_doing_that_action() {
    let run = RunBuilder::failed()
        .tool_ok(
            "t1",
            "get_reservation_details",
            json!({"reservation_id": "ABC123"}),
            json!({"reservation_id": "ABC123", "insurance": "no"}),
        )
        .tool_ok(
            "t2",
            "transfer_to_human_agents",
            json!({"summary": "travel insurance was not purchased for reservation ABC123"}),
            json!("Transfer successful"),
        )
        .answer("Travel insurance was not purchased for reservation ABC123.")
        .build();
    let c = check(&run);
    assert_ne!(c[0].label, SupportLabel::Contradicted, "{:?}", c[0]);
    assert_ne!(c[0].evidence_step, Some(1));
}

#[test]
fn a_number_contradicts_only_a_number_of_the_same_thing() {
    let user = json!({
        "payment_methods": {
            "certificate_7504069": {"source": "certificate", "amount": 250, "id": "certificate_7504069"},
            "credit_card_4421486": {"source": "credit_card", "brand": "visa", "last_four": "7447", "id": "credit_card_4421486"}
        },
        "membership": "gold"
    });
    let run = RunBuilder::failed()
        .user(
            "u1",
            "I want to use my certificates first, and if there's any balance, I'll use my 7447 card.",
        )
        .tool_ok(
            "t1",
            "get_user_details",
            json!({"user_id": "mia_li_3668"}),
            json!(user.to_string()),
        )
        .answer("Certificate 7504069: $250\nCredit Card: $55\nCertificate 7504069: $300")
        .build();
    let c = check(&run);
    assert_eq!(
        (c[0].label, c[0].evidence_step),
        (SupportLabel::Supported, Some(1)),
        "{:?}",
        c[0]
    );
    // The card's record gives its last four digits, not an amount: no contradiction.
    assert_ne!(c[1].label, SupportLabel::Contradicted, "{:?}", c[1]);
    // The certificate's record gives another amount: contradicted.
    assert_eq!(c[2].label, SupportLabel::Contradicted, "{:?}", c[2]);
}

#[test]
fn a_succeeded_action_contradicts_only_through_a_number_of_the_same_thing() {
    let build = |output: serde_json::Value| {
        RunBuilder::succeeded()
            .tool_def("update_reservation_flights", "", json!(null), true)
            .tool_ok(
                "t1",
                "update_reservation_flights",
                json!({"reservation_id": "ABC123", "cabin": "business"}),
                output,
            )
            .answer("The additional cost of $105 has been charged to your card.")
            .build()
    };
    let c = check(&build(json!({"reservation_id": "ABC123",
        "flights": [{"flight_number": "HAT136", "price": 1204}, {"flight_number": "HAT039", "price": 811}]})));
    assert_eq!(c[0].label, SupportLabel::Partial, "{:?}", c[0]);
    let c = check(&build(
        json!({"reservation_id": "ABC123", "additional_cost": 120}),
    ));
    assert_eq!(c[0].label, SupportLabel::Contradicted, "{:?}", c[0]);
    let c = check(&build(
        json!({"reservation_id": "ABC123", "additional_cost": 105}),
    ));
    assert_eq!(c[0].label, SupportLabel::Supported, "{:?}", c[0]);
}

#[test]
fn markdown_bold_markers_are_not_part_of_a_claim() {
    assert_eq!(
        split_claims("**Details:**\n- **Flight 1:** ATL to LGA, departing at 14:00."),
        vec!["Details:", "Flight 1: ATL to LGA, departing at 14:00."]
    );
}

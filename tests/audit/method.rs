//! The diagnosis method on runs nobody tuned on (tests/fixtures/audit/). For each run the verdict
//! step and category, the role, the fault party and the claim labels below were worked out by
//! hand from docs/how-it-decides.md before the code ran on it; the comment on each case gives the
//! reasoning, so a disagreement can be settled by reading the method, not the code.

use super::support::{analyze, close, fixture, report_of, run, suspect};
use serde_json::Value;
use tdn_tui::analysis::params::{
    CONTEXT_FULL, CONTRADICTED_CLAIM, EMPTY_RETRIEVAL, FAILED_PRECONDITION, OUTDATED_SOURCE,
    PROMPT_INJECTION_STRONG, REPEATED_CALL, ROOT_CAUSE_FACTOR, SERVICE_ERROR, STALE_CLAIM,
    SYMPTOM_FACTOR, UNUSED_READ_FACTOR, WALK_BACK_NAMED, WALK_BACK_UNNAMED, WALK_BACK_USER_VALUE,
    WORDING_FACTOR,
};

/// What the method implies for one run.
struct Case {
    /// Fixture name.
    file: &'static str,
    /// (step, category, role) of the verdict; None: no suspect at all.
    verdict: Option<(&'static str, &'static str, &'static str)>,
    /// `fault.party`.
    fault: &'static str,
    /// Claim labels in answer order.
    claims: &'static [&'static str],
}

const CASES: &[Case] = &[
    // A 500 with arguments the schema accepts and an error that names none of them: the tool or
    // its service is blamed (service_error), not the model step that issued the call. The
    // answer's claim no source supports weighs more (its rule was right more often on the
    // labelled runs than a service error, never right there) and leads.
    Case {
        file: "weather-500",
        verdict: Some(("m2", "unsupported_claim", "suspect")),
        fault: "agent",
        claims: &["unsupported"],
    },
    // The schema rejects qty 0 and the error names no argument value: the model step that wrote
    // the arguments is the root cause (the value rule's weight, x1.2), the failed call its symptom.
    Case {
        file: "cart-unnamed-value",
        verdict: Some(("m1", "wrong_value", "root_cause")),
        fault: "agent",
        claims: &["supported"],
    },
    // The outdated retrieval r1 is flagged, and its warehouse id flows through m1 into the failing
    // call: the earliest flagged upstream step is the root cause (x1.2).
    Case {
        file: "shipping-outdated-warehouse",
        verdict: Some(("r1", "outdated_source", "root_cause")),
        fault: "agent",
        claims: &["supported"],
    },
    // "12 days" against a tool result saying 7: contradicted; the outdated holiday list no
    // later step used is scored x0.6.
    Case {
        file: "leave-balance-unused-outdated",
        verdict: Some(("m2", "contradicted_claim", "suspect")),
        fault: "agent",
        claims: &["contradicted"],
    },
    // A refund succeeded, so the wording problem (a contradicted plan detail first written at m1)
    // is x0.7. The refund's point of no return, on m1 too (the decision that made the refund
    // call t1), is a lead: it names no fault, so the claim gives m1 its category.
    Case {
        file: "downgrade-refund-wording",
        verdict: Some(("m1", "contradicted_claim", "suspect")),
        fault: "agent",
        claims: &["supported", "contradicted"],
    },
    // Memory read back as written (keys reordered, a trailing space): no memory finding. The
    // only rule finding is the booking, the first state-changing call of a failed run, on m1,
    // the decision that made it: a lead, so no suspect. "Have a lovely evening!" is a
    // pleasantry.
    Case {
        file: "dinner-memory-roundtrip",
        verdict: None,
        fault: "agent",
        claims: &["supported", "no_claim"],
    },
    // The member number from the task matches nothing and nothing else succeeded: fault user.
    // The error names the value m1 passed as the task gave it to a look-up: the least weight, x1.2.
    Case {
        file: "loyalty-unknown-member",
        verdict: Some(("m1", "wrong_value", "root_cause")),
        fault: "user",
        claims: &["supported"],
    },
    // Recorded as failed, but nothing failed, nothing changed and the run ends on the agent's
    // question: unfinished. A question is no claim.
    Case {
        file: "dentist-waiting-question",
        verdict: None,
        fault: "unfinished",
        claims: &["no_claim"],
    },
    // A clean success that used exactly its step budget: no point of no return, no step budget
    // finding (only runs that did not succeed), fault none.
    Case {
        file: "booking-succeeded-clean",
        verdict: None,
        fault: "none",
        claims: &["supported"],
    },
    // A succeeded run: no failure to explain, so no verdict and fault none, whatever the rules
    // saw (the same run said to have failed is below).
    Case {
        file: "returns-succeeded-retry",
        verdict: None,
        fault: "none",
        claims: &["supported"],
    },
    // A close source with a different number (contradicted), a paraphrase sharing only "Mondays"
    // (partial), and a pleasantry (no claim).
    Case {
        file: "museum-claims",
        verdict: Some(("m1", "contradicted_claim", "suspect")),
        fault: "agent",
        claims: &["contradicted", "partial", "no_claim"],
    },
    // An email gives the assistant orders and a later call opens the link found only there:
    // strong prompt injection.
    Case {
        file: "inbox-injection-link",
        verdict: Some(("t1", "prompt_injection", "suspect")),
        fault: "agent",
        claims: &["supported"],
    },
    // Three identical calls (object keys in another order once): a loop at the third call,
    // blamed on m3, the decision that made it.
    Case {
        file: "payment-poll-loop",
        verdict: Some(("m3", "repeated_call", "suspect")),
        fault: "agent",
        claims: &["supported"],
    },
    // 7865 of 8192 tokens (96%, the step's own window) fills the window; 7700 (94%) does not.
    Case {
        file: "lease-context-96",
        verdict: Some(("m2", "context_full", "suspect")),
        fault: "agent",
        claims: &["supported"],
    },
    // The decision chose the option that requires the fraud check, which failed: planning.
    Case {
        file: "rma-fraud-precondition",
        verdict: Some(("d1", "failed_precondition", "suspect")),
        fault: "agent",
        claims: &["supported"],
    },
    // Eight steps under a budget of six, all different: the step budget, at the first step past
    // it (r6, index 6).
    Case {
        file: "research-step-budget",
        verdict: Some(("r6", "step_budget", "suspect")),
        fault: "agent",
        claims: &["supported"],
    },
    // The agent offered a paid upgrade, the guest kept the room, nothing changed: fault user.
    Case {
        file: "hotel-upgrade-declined",
        verdict: None,
        fault: "user",
        claims: &["no_claim"],
    },
    // Status unfinished: fault unfinished whatever failed; the 503 is the service's.
    Case {
        file: "unfinished-after-outage",
        verdict: Some(("t1", "service_error", "suspect")),
        fault: "unfinished",
        claims: &[],
    },
    // An outdated unit produced by a system step reaches the model and the answer repeats it:
    // stale claim; the producing step is the root cause.
    Case {
        file: "baggage-outdated-unit",
        verdict: Some(("s1", "outdated_source", "root_cause")),
        fault: "agent",
        claims: &["stale"],
    },
    // The run crashed but a step had failed: no run_status finding; the time-out is the service's.
    Case {
        file: "crash-after-timeout",
        verdict: Some(("t1", "service_error", "suspect")),
        fault: "agent",
        claims: &[],
    },
    // The booking failed and the answer says "Room Orion is booked": a claim that the action
    // happened, contradicted by the failed state-changing call (never supported by the user's
    // own request). The 409 names no argument: the service is a suspect too, but the claim's
    // rule was right far more often on the labelled runs than a service error's (never), so the
    // claim leads. The booking decision upstream is only a lead (the first change), no cause.
    Case {
        file: "room-booking-failed-passive",
        verdict: Some(("m2", "contradicted_claim", "suspect")),
        fault: "agent",
        claims: &["contradicted"],
    },
    // "I could not book room Orion": a negated claim of an action, supported by the failed call.
    Case {
        file: "room-not-booked-negated",
        verdict: Some(("t1", "service_error", "suspect")),
        fault: "agent",
        claims: &["supported"],
    },
    // Arguments the schema accepts and "invalid API key", which names no argument: the service,
    // not the model.
    Case {
        file: "crm-invalid-api-key",
        verdict: Some(("t1", "service_error", "suspect")),
        fault: "agent",
        claims: &[],
    },
    // The request ("the coming days") matches the description of get_forecast, never called, on
    // three words and that of get_weather on one: wrong tool by description, placed on the
    // model step that chose the tool.
    Case {
        file: "forecast-wrong-tool-description",
        verdict: Some(("m1", "wrong_tool", "suspect")),
        fault: "agent",
        claims: &["supported"],
    },
];

fn labels(r: &Value) -> Vec<String> {
    r["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn verdict_fault_and_claims_are_what_the_method_implies() {
    let mut wrong = Vec::new();
    for c in CASES {
        let r = analyze(c.file);
        let got_verdict = r["verdict"].as_object().map(|v| {
            let top = &r["suspects"][0];
            (
                v["step"].as_str().unwrap().to_owned(),
                v["category"].as_str().unwrap().to_owned(),
                top["role"].as_str().unwrap().to_owned(),
            )
        });
        let want_verdict = c
            .verdict
            .map(|(s, k, role)| (s.to_owned(), k.to_owned(), role.to_owned()));
        if got_verdict != want_verdict {
            wrong.push(format!(
                "{}: verdict {got_verdict:?}, want {want_verdict:?}",
                c.file
            ));
        }
        if r["fault"]["party"] != c.fault {
            wrong.push(format!(
                "{}: fault {}, want {}",
                c.file, r["fault"]["party"], c.fault
            ));
        }
        let got = labels(&r);
        if got != c.claims {
            wrong.push(format!("{}: claims {got:?}, want {:?}", c.file, c.claims));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_500_with_valid_arguments_blames_the_service_and_never_the_model() {
    for file in ["weather-500", "crm-invalid-api-key", "crash-after-timeout"] {
        let r = analyze(file);
        let t1 = suspect(&r, "t1").unwrap();
        assert_eq!(t1["category"], "service_error", "{file}");
        assert!(close(&t1["score"], SERVICE_ERROR), "{file}: {t1}");
        assert!(
            suspect(&r, "m1").is_none(),
            "{file}: the model step that issued a valid call is not a suspect: {}",
            r["suspects"]
        );
        assert!(
            r["suspects"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["category"] != "wrong_value"),
            "{file}"
        );
    }
    // A crashed run with a failed step has no run_status finding.
    let r = analyze("crash-after-timeout");
    assert!(
        r["suspects"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["detector"] != "run_status")
    );
}

#[test]
fn the_value_rule_weighs_a_fair_look_up_of_what_the_user_gave_least() {
    let r = analyze("cart-unnamed-value");
    let m1 = suspect(&r, "m1").unwrap();
    assert!(close(&m1["confidence"], WALK_BACK_UNNAMED), "{m1}");
    assert!(
        close(&m1["score"], WALK_BACK_UNNAMED * ROOT_CAUSE_FACTOR),
        "{m1}"
    );
    // The failed call only showed the decision's effect: not listed; m1's evidence names it.
    assert!(suspect(&r, "t1").is_none(), "{r}");
    assert!(
        m1["evidence"].as_array().unwrap().iter().any(|e| e
            .as_str()
            .unwrap()
            .contains("there, the tool 'add_to_cart' failed")),
        "{m1}"
    );

    // The member id the error names came from the task, passed as given to a look-up that
    // matched nothing: the model's choice was fair, the user's id was wrong, so the value rule
    // weighs the least instead of its own measured weight.
    let r = analyze("loyalty-unknown-member");
    let m1 = suspect(&r, "m1").unwrap();
    assert!(close(&m1["confidence"], WALK_BACK_USER_VALUE), "{m1}");
    const { assert!(WALK_BACK_USER_VALUE < WALK_BACK_NAMED) };
    assert!(
        close(&m1["score"], WALK_BACK_USER_VALUE * ROOT_CAUSE_FACTOR),
        "{m1}"
    );
    assert!(
        m1["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e.as_str().unwrap().contains("first given by the user")),
        "{m1}"
    );
}

#[test]
fn an_earlier_flagged_step_upstream_of_the_failure_is_the_root_cause() {
    let r = analyze("shipping-outdated-warehouse");
    let r1 = suspect(&r, "r1").unwrap();
    assert!(
        close(&r1["score"], OUTDATED_SOURCE * ROOT_CAUSE_FACTOR),
        "{r1}"
    );
    assert!(
        r1["evidence"][0]
            .as_str()
            .unwrap()
            .contains("flows into step 't1' (position 4), where the failure surfaced"),
        "{r1}"
    );
    assert!(
        suspect(&r, "t1").is_none(),
        "the failed call only showed the effect"
    );
    // m1 made the shipment call (the first state-changing call: point of no return, a lead),
    // but the value rule is not used when a flagged step is upstream: m1 is no suspect.
    assert!(suspect(&r, "m1").is_none(), "{r}");
    let leads = r["leads"].as_array().unwrap();
    assert!(
        leads
            .iter()
            .any(|l| l["step"] == "m1" && l["category"] == "point_of_no_return"),
        "{r}"
    );

    let r = analyze("baggage-outdated-unit");
    let m1 = suspect(&r, "m1").unwrap();
    assert_eq!(
        (&m1["category"], &m1["cause"]),
        (&"stale_claim".into(), &"s1".into())
    );
    assert!(close(&m1["score"], STALE_CLAIM * SYMPTOM_FACTOR), "{m1}");
    assert_eq!(r["claims"][0]["evidence_step"], "s1");
    assert_eq!(r["claims"][0]["origin_step"], "m1");
}

#[test]
fn a_read_no_later_step_used_is_scored_down() {
    let r = analyze("leave-balance-unused-outdated");
    assert!(close(
        &suspect(&r, "r1").unwrap()["score"],
        OUTDATED_SOURCE * UNUSED_READ_FACTOR
    ));
    assert!(close(
        &suspect(&r, "m2").unwrap()["score"],
        CONTRADICTED_CLAIM
    ));
    assert_eq!(r["claims"][0]["evidence_step"], "t1");
    // The same run said to have failed: the empty first search no later step used is a suspect,
    // scored x0.6.
    let r = report_of(&run(&[
        "analyze",
        "--json",
        "--outcome",
        "failed",
        &fixture("returns-succeeded-retry"),
    ]));
    assert_eq!(r["run"]["status_from"], "given");
    assert!(
        close(
            &suspect(&r, "r1").unwrap()["score"],
            EMPTY_RETRIEVAL * UNUSED_READ_FACTOR
        ),
        "{r}"
    );
}

#[test]
fn a_wording_problem_in_a_run_that_refunded_is_scored_down_and_the_refund_is_a_lead() {
    let r = analyze("downgrade-refund-wording");
    // The refund call t1 was decided at m1, which also wrote the contradicted plan detail: one
    // suspect, m1, named by the claim (x0.7: a run that changed something); the refund, a lead
    // that names no fault, adds its evidence and caps nothing.
    assert!(suspect(&r, "t1").is_none());
    let m1 = suspect(&r, "m1").unwrap();
    assert_eq!(m1["category"], "contradicted_claim");
    assert!(
        close(&m1["score"], CONTRADICTED_CLAIM * WORDING_FACTOR),
        "{m1}"
    );
    assert!(
        m1["evidence"].as_array().unwrap().iter().any(|e| e
            .as_str()
            .unwrap()
            .starts_with("also: the first state-changing call")),
        "{m1}"
    );
    assert_eq!(r["claims"][1]["evidence_step"], "r1");
    assert_eq!(r["claims"][1]["origin_step"], "m1");
}

#[test]
fn a_memory_read_that_matches_the_write_is_no_finding() {
    let r = analyze("dinner-memory-roundtrip");
    for s in r["suspects"].as_array().unwrap() {
        assert_ne!(s["detector"], "memory_consistency", "{s}");
    }
    // The booking, the only finding, is a lead.
    assert_eq!(r["suspects"].as_array().unwrap().len(), 0);
    assert_eq!(r["leads"].as_array().unwrap().len(), 1);
}

#[test]
fn succeeded_runs_blame_nothing_as_the_failure() {
    for file in ["booking-succeeded-clean", "returns-succeeded-retry"] {
        let r = analyze(file);
        assert_eq!(r["suspects"], serde_json::json!([]), "{file}");
        assert_eq!(r["verdict"], Value::Null, "{file}");
        assert_eq!(r["fault"]["party"], "none", "{file}");
        assert_eq!(r["run"]["status_from"], "recorded", "{file}");
    }
    let r = analyze("booking-succeeded-clean");
    // The claim that the room is booked rests on the booking call, not the user's request.
    assert_eq!(r["claims"][0]["evidence_step"], "t1");
    let out = run(&["analyze", &fixture("returns-succeeded-retry")]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("The run succeeded"), "{text}");
    assert!(text.contains("Fault: none."), "{text}");
}

#[test]
fn claims_paraphrase_pleasantry_and_a_different_number() {
    let r = analyze("museum-claims");
    let c = r["claims"].as_array().unwrap();
    assert_eq!(c[0]["evidence_step"], "r1");
    assert_eq!(c[1]["evidence_step"], "r1");
    assert_eq!(c[2]["evidence_step"], Value::Null);
    assert_eq!(c[2]["origin_step"], Value::Null);
    // Only the contradicted claim is a finding; a pleasantry is not an unsupported claim.
    assert_eq!(r["suspects"].as_array().unwrap().len(), 1);
    assert!(close(&r["suspects"][0]["score"], CONTRADICTED_CLAIM));
}

#[test]
fn claims_of_actions_are_checked_against_the_calls() {
    // "Room Orion is booked" after a failed booking: contradicted by the call, and the call's
    // evidence says the answer claims it worked.
    let r = analyze("room-booking-failed-passive");
    assert_eq!(r["claims"][0]["evidence_step"], "t1");
    assert_eq!(r["claims"][0]["origin_step"], "m2");
    let t1 = suspect(&r, "t1").unwrap();
    assert!(
        t1["evidence"].as_array().unwrap().iter().any(|e| e
            .as_str()
            .unwrap()
            .contains("yet the final answer says it worked")),
        "{t1}"
    );
    let m2 = suspect(&r, "m2").unwrap();
    assert_eq!(m2["category"], "contradicted_claim");
    // "I could not book …" after the same failure: supported by that call.
    let r = analyze("room-not-booked-negated");
    assert_eq!(r["claims"][0]["evidence_step"], "t1");
    assert!(suspect(&r, "m2").is_none());
    // "I could not add the keyboards" after a failed add_to_cart.
    let r = analyze("cart-unnamed-value");
    assert_eq!(r["claims"][0]["evidence_step"], "t1");
}

#[test]
fn strong_injection_loop_window_planning_and_budget_scores() {
    let r = analyze("inbox-injection-link");
    let t1 = suspect(&r, "t1").unwrap();
    assert!(
        close(&t1["confidence"], PROMPT_INJECTION_STRONG)
            && close(&t1["score"], PROMPT_INJECTION_STRONG),
        "{t1}"
    );
    assert!(
        t1["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e.as_str().unwrap().contains("appears only in this text")),
        "{t1}"
    );

    let r = analyze("payment-poll-loop");
    assert_eq!(r["suspects"].as_array().unwrap().len(), 1);
    assert!(close(&r["suspects"][0]["score"], REPEATED_CALL));

    let r = analyze("lease-context-96");
    assert_eq!(
        r["suspects"].as_array().unwrap().len(),
        1,
        "94% is not full"
    );
    assert!(close(&r["suspects"][0]["score"], CONTEXT_FULL));

    let r = analyze("rma-fraud-precondition");
    assert!(close(
        &suspect(&r, "d1").unwrap()["score"],
        FAILED_PRECONDITION
    ));
    assert_eq!(suspect(&r, "s1").unwrap()["category"], "service_error");
    // The replacement call t2 was decided at d1: its point of no return joins d1's evidence.
    assert!(suspect(&r, "t2").is_none());
    assert!(
        suspect(&r, "d1").unwrap()["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e
                .as_str()
                .unwrap()
                .starts_with("also: the first state-changing call")),
        "{r}"
    );

    let r = analyze("research-step-budget");
    assert_eq!(r["verdict"]["index"], 6);
    assert_eq!(r["suspects"].as_array().unwrap().len(), 1);
}

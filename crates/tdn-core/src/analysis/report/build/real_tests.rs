//! Claims and fault verdicts on a real export: the Langfuse support agent's trace of
//! tests/fixtures/import/real/langfuse/evilmartians__langfuse-2.json (a RAG tool whose result
//! holds its documents as a JSON string, a system prompt sent in the model's messages), with
//! the answer set to text built from the trace's own documents and prompt. Each test is one
//! defect found on real exports: a figure a retrieved document gave labelled partial, a
//! sentence split inside parentheses, headings labelled supported, the agent's own identity
//! unsupported though its system prompt says it, a finished answer ending on "anything else?"
//! judged unfinished, and a suspect shown beside "nothing went wrong yet".

use super::*;
use crate::analysis::claims::check_claims;
use crate::analysis::links::StepTexts;
use crate::analysis::load::{LoadOptions, load_path};
use crate::analysis::report::{Party, SupportLabel};

struct NoEmbedder;

impl crate::analysis::influence::Embedder for NoEmbedder {
    fn name(&self) -> &str {
        "none"
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        Ok(texts.iter().map(|_| vec![1.0]).collect())
    }
}

use crate::analysis::influence::EmbedError;

/// The support agent's run, its answer replaced by `answer` (also the last model step's output).
fn support_agent(answer: &str) -> Loaded {
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/import/real/langfuse/evilmartians__langfuse-2.json");
    let mut all = load_path(&path, &LoadOptions::default()).unwrap_or_default();
    assert_eq!(all.len(), 1, "one run in the export");
    let mut l = all.remove(0);
    l.run.final_answer = Some(answer.to_owned());
    if let Some(last) = l.run.steps.last_mut() {
        last.output = Some(serde_json::json!(answer).into());
    }
    l
}

fn claims(l: &Loaded) -> Vec<(String, SupportLabel, Option<usize>, String)> {
    let texts = StepTexts::build(&l.run);
    check_claims(&l.run, &texts)
        .into_iter()
        .map(|c| (c.text, c.label, c.evidence_step, c.why))
        .collect()
}

/// The step of the documentation search whose result the answer draws on.
fn search_step(l: &Loaded) -> Option<usize> {
    l.run.steps.iter().position(|s| {
        s.tool
            .as_ref()
            .is_some_and(|t| t.name == "searchLangfuseDocs")
    })
}

#[test]
fn a_figure_the_retrieved_documents_give_is_supported_by_them() {
    // The search result gives `name="fact_check_accuracy",` on one line and `value=0.95,` on the
    // next, inside a JSON string of the result; the user's question names Langfuse
    // evaluations but no figure.
    let l = support_agent(
        "Langfuse evaluations can record a score for fact check accuracy with a value of 0.95.",
    );
    let c = claims(&l);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].1, SupportLabel::Supported, "{c:?}");
    assert_eq!(c[0].2, search_step(&l), "{c:?}");
    assert!(c[0].3.contains("0.95"), "{c:?}");
}

#[test]
fn a_sentence_goes_on_after_a_full_stop_inside_parentheses() {
    let l = support_agent(
        "Run one experiment per variant (the SDK creates a dataset run for you. Each run is scored.) and compare runs in the UI.",
    );
    let c = claims(&l);
    let texts: Vec<&str> = c.iter().map(|x| x.0.as_str()).collect();
    // One claim: not cut at the full stop inside the parentheses, nor at "and" before a second
    // instruction to the same reader.
    assert_eq!(
        texts,
        vec![
            "Run one experiment per variant (the SDK creates a dataset run for you. Each run is scored.) and compare runs in the UI."
        ]
    );
}

#[test]
fn short_lines_with_more_under_them_are_headings_not_claims() {
    // The system prompt asks for sections "Minimal Example" and "Links"; the documents hold
    // both words, which labelled the headings supported.
    let l = support_agent(
        "Minimal example (Python)\n```python\nprint(lf.get_dataset(\"my-eval-dataset\"))\n```\n\nLinks\n- See Datasets in the docs.",
    );
    let c = claims(&l);
    for heading in ["Minimal example (Python)", "Links"] {
        let found = c.iter().find(|x| x.0 == heading);
        assert_eq!(
            found.map(|x| (x.1, x.3.as_str())),
            Some((SupportLabel::NoClaim, "a heading, not a claim")),
            "{c:?}"
        );
    }
    // The last line has nothing under it: it is a claim, labelled by its words.
    assert!(
        c.iter()
            .any(|x| x.0 == "See Datasets in the docs." && x.1 != SupportLabel::NoClaim),
        "{c:?}"
    );
}

#[test]
fn the_agent_saying_who_it_is_is_supported_by_its_system_prompt() {
    // The prompt reaches the model as the system message of its input, not as a step.
    let l = support_agent("I'm a helpful Langfuse support agent.");
    let c = claims(&l);
    assert_eq!(c[0].1, SupportLabel::Supported, "{c:?}");
    assert!(c[0].3.starts_with("said by the instructions"), "{c:?}");
    assert!(
        c[0].3.contains("You are a helpful Langfuse support agent."),
        "{c:?}"
    );
    // Where the prompt sends the user is the agent's to say; a figure a prompt's worked example
    // holds is no source of an answer's figure.
    let l = support_agent(
        "Your conversation is traced in the Langfuse Demo Project at https://cloud.langfuse.com/project/clkpwwm0m000gmm094odg11gi/traces. The demo project keeps 1 trace per chat.",
    );
    let c = claims(&l);
    assert_eq!(c[0].1, SupportLabel::Supported, "{c:?}");
    assert!(c[0].3.starts_with("said by the instructions"), "{c:?}");
    assert!(
        c.get(1)
            .is_some_and(|x| !x.3.contains("the instructions") && x.1 != SupportLabel::Supported),
        "{c:?}"
    );
}

fn analysed(answer: &str) -> Report {
    analyze(&support_agent(answer), &AnalyzeOptions::new(&NoEmbedder))
}

#[test]
fn a_finished_answer_closing_with_an_offer_of_more_help_waits_for_nothing() {
    let offer = analysed(
        "Run one experiment per variant on the same dataset. Is there anything else I can help you with?",
    );
    assert!(offer.suspects.is_empty(), "{:?}", offer.suspects);
    assert_ne!(offer.fault.party, Party::Unfinished, "{}", offer.fault.why);
    assert!(!offer.fault.why.contains("waiting"), "{}", offer.fault.why);
    // A question the answer needs answered does wait for the user.
    let asks = analysed(
        "Run one experiment per variant on the same dataset. Which SDK are you using, Python or JS/TS?",
    );
    assert!(asks.suspects.is_empty(), "{:?}", asks.suspects);
    assert_eq!(asks.fault.party, Party::Unfinished, "{}", asks.fault.why);
}

#[test]
fn a_run_with_a_suspect_is_never_one_where_nothing_went_wrong_yet() {
    // A claim no source holds, then a question for the user.
    let r = analysed(
        "Zorblax quintuples every gizmo by 1492. Which SDK are you using, Python or JS/TS?",
    );
    assert!(!r.suspects.is_empty(), "{:?}", r.claims);
    assert_eq!(r.fault.party, Party::Agent, "{}", r.fault.why);
    assert!(
        !r.fault.why.contains("nothing went wrong"),
        "{}",
        r.fault.why
    );
    let text = crate::analysis::report::render_text(&r);
    assert!(!text.contains("nothing went wrong yet"), "{text}");
}

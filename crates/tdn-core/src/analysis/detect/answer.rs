//! What a final answer asserts, for the detectors that trace it back: its items (a short answer
//! and its parts; in a long answer its numbers, ids and quoted, bold or code-marked spans), and
//! one comparable word form of any text so an item is found wherever it was written
//! (`737,015` and `737015` read the same). Also who wrote the code a code-running step ran, and
//! the answer's origin that `answer_origin` blames and `answer_handoff` looks around ([`trace`]).
//! Pure functions over text; linear in the text and the run; no I/O.

use super::Facts;
use crate::analysis::links::number_value;
use crate::analysis::links::tokens::{TokenClass, tokens};
use crate::analysis::model::{Run, StepKind};
use crate::analysis::params::{
    ANSWER_ITEM_MAX_CHARS, ANSWER_MAX_ITEMS, ANSWER_SHORT_WORDS, LINK_SCAN_BYTES,
};
use aho_corasick::AhoCorasick;
use serde_json::Value;

/// One thing the final answer asserts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// Its words in [`norm_words`] form, with a space at each end.
    pub key: String,
    /// As written in the answer (for evidence).
    pub shown: String,
}

/// The words of `text` in one comparable form, separated and surrounded by single spaces:
/// numbers in canonical form (`737,015` gives `737015`, `35.00` gives `35`), every other token
/// split into lower-case runs of letters and digits (`Joe's` gives `joe s`). Reads at most
/// [`LINK_SCAN_BYTES`] of `text`.
pub fn norm_words(text: &str) -> String {
    let text = crate::analysis::links::tokens::clip(text, LINK_SCAN_BYTES);
    let mut out = String::with_capacity(text.len() / 2 + 2);
    out.push(' ');
    let mut toks = tokens(text).peekable();
    while let Some(t) = toks.next() {
        if t.class == TokenClass::Number
            && let Some(x) = number_value(t.text)
        {
            // "1.08 billion" reads as 1080000000, as an answer may write it.
            let scale = toks.peek().and_then(|n| scale_of(n.text));
            let x = match scale {
                Some(k) => {
                    toks.next();
                    let y = x * k;
                    // 2.3 x 1e6 is 2299999.9999999995 in binary: keep the whole number meant.
                    if (y - y.round()).abs() <= 1e-6 * y.abs() {
                        y.round()
                    } else {
                        y
                    }
                }
                None => x,
            };
            out.push_str(&format!("{x}"));
            out.push(' ');
            continue;
        }
        for part in t.text.split(|c: char| !c.is_alphanumeric()) {
            if part.is_empty() {
                continue;
            }
            if part.chars().all(|c| c.is_ascii_digit())
                && let Some(x) = number_value(part)
            {
                out.push_str(&format!("{x}"));
            } else {
                out.extend(part.chars().flat_map(char::to_lowercase));
            }
            out.push(' ');
        }
    }
    out
}

/// The factor of a scale word written after a number (`thousand`, `million`, `billion`,
/// `trillion`, any case).
fn scale_of(word: &str) -> Option<f64> {
    [
        ("thousand", 1e3),
        ("million", 1e6),
        ("billion", 1e9),
        ("trillion", 1e12),
    ]
    .into_iter()
    .find(|(w, _)| word.eq_ignore_ascii_case(w))
    .map(|(_, k)| k)
}

/// The items of a final answer the run should not have given: the answer's items that the task
/// does not already hold and, with a reference answer in force, that the reference does not hold.
/// `None` when the answer already holds the reference (the answer is right; nothing to trace).
pub fn answer_items(answer: &str, task: &str, reference: Option<&str>) -> Option<Vec<Item>> {
    let answer = crate::analysis::links::tokens::clip(answer, LINK_SCAN_BYTES);
    let text = without_code_blocks(answer);
    let words = tokens(&text).count();
    let short = words > 0 && words <= ANSWER_SHORT_WORDS;
    let mut raw: Vec<String> = Vec::new();
    if short {
        raw.push(text.trim().to_owned());
        raw.extend(parts(&text));
    }
    for t in tokens(&text) {
        if matches!(
            t.class,
            TokenClass::Number | TokenClass::Id | TokenClass::Date
        ) {
            raw.push(t.text.to_owned());
        }
    }
    if !short {
        raw.extend(marked_spans(&text));
    }
    let task_n = norm_words(task);
    let answer_n = norm_words(&text);
    let ref_n = reference.map(norm_words);
    if let Some(r) = &ref_n {
        let r_len = r.trim().chars().count();
        if r_len >= 2 && (short || r_len >= 4) && answer_n.contains(r.as_str()) {
            return None;
        }
    }
    let mut out: Vec<Item> = Vec::new();
    for shown in raw {
        if out.len() >= ANSWER_MAX_ITEMS {
            break;
        }
        let key = norm_words(&shown);
        if key.trim().chars().count() < 2
            || task_n.contains(key.as_str())
            || ref_n.as_deref().is_some_and(|r| r.contains(key.as_str()))
            || out.iter().any(|i| i.key == key)
        {
            continue;
        }
        out.push(Item { key, shown });
    }
    Some(out)
}

/// The parts of a short answer: split at `;`, line breaks, ` and `, and commas that do not sit
/// between two digits (`1,200` stays whole).
fn parts(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev: Option<char> = None;
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        let next = it.peek().copied();
        let cut = match c {
            ';' | '\n' => true,
            // A sentence's end: "Hello, Bob! And bye." is two parts; "St. Louis" is one.
            '!' | '?' => next.is_some_and(char::is_whitespace),
            '.' => {
                next.is_some_and(char::is_whitespace)
                    && !crate::analysis::claims::ends_abbreviated(&format!("{cur}."))
            }
            ',' => {
                !(prev.is_some_and(|p| p.is_ascii_digit())
                    && next.is_some_and(|n| n.is_ascii_digit()))
            }
            _ => false,
        };
        if cut {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
        prev = Some(c);
    }
    out.push(cur);
    out.iter()
        .flat_map(|p| p.split(" and "))
        .map(|p| without_joiners(p.trim()).to_owned())
        .filter(|p| {
            p.split(|c: char| !c.is_alphanumeric()).any(|w| {
                !w.is_empty() && !crate::analysis::claims::words::is_stopword(&w.to_lowercase())
            })
        })
        .collect()
}

/// A part without the "and", "or" or "but" that opened or closed it ("And, bye" is "bye").
fn without_joiners(p: &str) -> &str {
    let mut p = p.trim_matches(|c: char| c.is_whitespace() || c == ',');
    for j in ["and", "or", "but"] {
        if let Some(head) = p.get(..j.len()).filter(|h| h.eq_ignore_ascii_case(j))
            && p.get(j.len()..)
                .is_none_or(|r| r.is_empty() || r.starts_with([' ', ',']))
        {
            p = p
                .get(head.len()..)
                .unwrap_or_default()
                .trim_start_matches([' ', ',']);
        }
        let n = p.len();
        if n > j.len()
            && let Some(tail) = p.get(n - j.len()..).filter(|t| t.eq_ignore_ascii_case(j))
            && p.get(..n - j.len())
                .is_some_and(|r| r.ends_with([' ', ',']))
        {
            p = p
                .get(..n - tail.len())
                .unwrap_or_default()
                .trim_end_matches([' ', ',']);
        }
    }
    p
}

/// `text` with fenced code blocks left out, except one-line blocks of at most
/// [`ANSWER_ITEM_MAX_CHARS`] characters (an answer set off as code), which keep their body.
fn without_code_blocks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(a) = rest.find("```") {
        out.push_str(rest.get(..a).unwrap_or_default());
        let after = rest.get(a + 3..).unwrap_or_default();
        let Some(b) = after.find("```") else {
            rest = "";
            break;
        };
        let body = after.get(..b).unwrap_or_default().trim();
        if !body.contains('\n') && body.chars().count() <= ANSWER_ITEM_MAX_CHARS {
            out.push(' ');
            out.push_str(body);
            out.push(' ');
        }
        rest = after.get(b + 3..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// Spans set off in the text: `**bold**`, `"quoted"`, `“quoted”` and `` `code` ``, on one line,
/// 2 to [`ANSWER_ITEM_MAX_CHARS`] characters, not a heading (ending in `:`).
fn marked_spans(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [
        ("**", "**"),
        ("\"", "\""),
        ("\u{201c}", "\u{201d}"),
        ("`", "`"),
    ] {
        let mut rest = text;
        while let Some(a) = rest.find(open) {
            let after = rest.get(a + open.len()..).unwrap_or_default();
            let Some(b) = after.find(close) else { break };
            let span = after.get(..b).unwrap_or_default();
            let inner = span.trim().trim_matches('"').trim();
            let n = inner.chars().count();
            if !span.contains('\n')
                && (2..=ANSWER_ITEM_MAX_CHARS).contains(&n)
                && !inner.ends_with(':')
            {
                out.push(inner.to_owned());
            }
            rest = after.get(b + close.len()..).unwrap_or_default();
        }
    }
    out
}

/// True when at least two agents speak in the run (steps name two different `agent`s), or the
/// run lists a team of two or more in `attributes.agents` (an orchestrator that answered alone
/// still worked in a team): a multi-agent log, where "which member of the team first said it" is
/// the question. Single-agent runs are left to the claim check.
pub fn multi_agent(run: &Run) -> bool {
    let team = run
        .attributes
        .get("agents")
        .and_then(Value::as_array)
        .map_or(0, |a| a.iter().filter_map(Value::as_str).take(2).count());
    if team >= 2 {
        return true;
    }
    let mut first: Option<&str> = None;
    for a in run.steps.iter().filter_map(|s| s.agent.as_deref()) {
        let a = a.trim();
        if a.is_empty() {
            continue;
        }
        match first {
            None => first = Some(a),
            Some(f) if f != a => return true,
            Some(_) => {}
        }
    }
    false
}

/// For a step that ran code (a tool call with a `code` argument, as imported multi-agent logs
/// record an execution): the step that wrote the code, from `attributes.code_from` when the
/// importer recorded it, else the model step that issued the call. `None` for other steps.
pub fn code_author(f: &Facts<'_>, i: usize) -> Option<usize> {
    let s = f.run.steps.get(i)?;
    let call = s.tool.as_ref()?;
    let ran_code = call
        .arguments
        .get("code")
        .is_some_and(|c| matches!(c, crate::analysis::model::Json::String(_)));
    if !ran_code && !s.attributes().contains_key("code_from") {
        return None;
    }
    s.attributes()
        .get("code_from")
        .and_then(Value::as_str)
        .and_then(|id| f.run.step_index(id))
        .filter(|&j| j < i)
        .or_else(|| f.caller(i))
}

/// Where a failed multi-agent run's final answer came from (docs/how-it-decides.md, "Answer
/// origin"): the earliest step blamed for one of its items.
#[derive(Debug)]
pub struct AnswerTrace {
    /// The answer's items that are traced.
    pub items: Vec<Item>,
    /// One multi-pattern search over the items' keys (pattern `k` is `items[k]`).
    pub matcher: AhoCorasick,
    /// The blamed step: the model step that first stated an item, or the step that wrote the
    /// code whose printed output first held it.
    pub origin: usize,
    /// The step whose output first held the first of `introduced` (the origin, or the code run).
    pub holder: usize,
    /// The items the origin introduced, in the answer's order (never empty).
    pub introduced: Vec<usize>,
}

/// The answer's origin in a failed multi-agent run, or `None` (a run that did not fail, a
/// single agent, no answer, nothing to trace, or no item traced to a model step). For each item,
/// the first step (not a user or system message) whose output holds it: a model step is its
/// origin, a step that ran code gives the step that wrote the code, other steps are sources. A
/// phrase holding another found item is traced through that item. One pass over the steps with
/// one multi-pattern search: linear in the run.
pub fn trace(f: &Facts<'_>) -> Option<AnswerTrace> {
    let run = f.run;
    if !run.went_wrong() || !multi_agent(run) {
        return None;
    }
    let answer = run.final_answer.as_deref()?;
    let items = answer_items(answer, run.task.as_deref().unwrap_or(""), f.reference())?;
    if items.is_empty() {
        return None;
    }
    let matcher = AhoCorasick::new(items.iter().map(|i| i.key.as_str())).ok()?;
    let mut first: Vec<Option<usize>> = vec![None; items.len()];
    let mut left = items.len();
    for (i, s) in run.steps.iter().enumerate() {
        if left == 0 {
            break;
        }
        // A container's output repeats what happened inside it; it states nothing first.
        if matches!(s.kind, StepKind::User | StepKind::System) || s.is_container() {
            continue;
        }
        for m in matcher.find_overlapping_iter(&norm_words(&f.texts.produced(i))) {
            if let Some(slot) = first.get_mut(m.pattern().as_usize())
                && slot.is_none()
            {
                *slot = Some(i);
                left -= 1;
            }
        }
    }
    let mut best: Option<(usize, usize, Vec<usize>)> = None;
    for (k, (item, holder)) in items.iter().zip(&first).enumerate() {
        let Some(h) = *holder else { continue };
        let holds_found = items
            .iter()
            .zip(&first)
            .enumerate()
            .any(|(j, (other, at))| {
                j != k
                    && at.is_some()
                    && other.key.len() < item.key.len()
                    && item.key.contains(other.key.as_str())
            });
        if holds_found {
            continue;
        }
        let blamed = match run.steps.get(h).map(|s| s.kind) {
            Some(kind) if kind.is_model() => Some(h),
            Some(StepKind::Tool) => code_author(f, h),
            _ => None,
        };
        let Some(b) = blamed else { continue };
        match &mut best {
            Some((bb, _, list)) if *bb == b => list.push(k),
            Some((bb, _, _)) if *bb < b => {}
            _ => best = Some((b, h, vec![k])),
        }
    }
    let (origin, holder, introduced) = best?;
    Some(AnswerTrace {
        items,
        matcher,
        origin,
        holder,
        introduced,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of the items of `answer` to `task`, with no reference.
    fn keys(answer: &str, task: &str) -> Vec<String> {
        answer_items(answer, task, None)
            .unwrap_or_default()
            .into_iter()
            .map(|i| i.key)
            .collect()
    }

    #[test]
    fn numbers_read_the_same_in_any_form() {
        assert_eq!(
            norm_words("Seattle: 737,015 people"),
            " seattle 737015 people "
        );
        assert_eq!(norm_words("35.00% of Joe's"), " 35 of joe s ");
        assert!(norm_words("pop 737015.").contains(" 737015 "));
        assert_eq!(
            norm_words("sold for $1.08 billion"),
            " sold for 1080000000 "
        );
        assert_eq!(norm_words("2.5 Million people"), " 2500000 people ");
        assert_eq!(norm_words("a billion"), " a billion ");
        assert_eq!(norm_words("2.3 million"), " 2300000 ");
    }

    #[test]
    fn a_listed_team_makes_a_multi_agent_run_even_when_one_agent_spoke() {
        let mut run = crate::analysis::testutil::RunBuilder::failed()
            .llm("s1", "It is 42.")
            .build();
        run.steps[0].agent = Some("Orchestrator".to_owned());
        assert!(!multi_agent(&run));
        run.attributes.insert(
            "agents".to_owned(),
            serde_json::json!(["Orchestrator", "WebSurfer"]),
        );
        assert!(multi_agent(&run));
        run.attributes
            .insert("agents".to_owned(), serde_json::json!(["Orchestrator"]));
        assert!(!multi_agent(&run));
    }

    #[test]
    fn a_short_answer_gives_itself_and_its_parts() {
        assert_eq!(
            keys("Equinox Flatiron, Nimble Fitness", "gyms near the park?"),
            [
                " equinox flatiron nimble fitness ",
                " equinox flatiron ",
                " nimble fitness "
            ]
        );
    }

    #[test]
    fn parts_end_at_a_sentence_and_lose_the_joining_word() {
        assert_eq!(
            keys(
                "Hello my darling Bob! And, bye my dear Bob!",
                "Greet Bob and say goodbye."
            ),
            [
                " hello my darling bob and bye my dear bob ",
                " hello my darling bob ",
                " bye my dear bob "
            ]
        );
        let st_louis = keys("St. Louis, Missouri", "Where?");
        assert!(st_louis.contains(&" st louis ".to_owned()));
        assert!(!st_louis.contains(&" st ".to_owned()));
        assert_eq!(without_joiners("and, bye"), "bye");
        assert_eq!(without_joiners("Paris or"), "Paris");
        assert_eq!(without_joiners("Andorra"), "Andorra");
        assert_eq!(without_joiners("Oregon"), "Oregon");
    }

    #[test]
    fn a_long_answer_gives_its_numbers_and_marked_spans_not_the_task_or_code() {
        let answer = "The difference for the 2020 census is 732,050, so the answer is **Seattle**. \
                      Here is how:\n```python\nx = 999111\n```\nDone, as the team agreed after a careful check.";
        let items =
            answer_items(answer, "As of the 2020 census, what was it?", None).unwrap_or_default();
        let keys: Vec<&str> = items.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(keys, vec![" 732050 ", " seattle "]);
    }

    #[test]
    fn an_answer_holding_the_reference_has_nothing_to_trace() {
        assert_eq!(
            answer_items(
                "Nosferatu the Vampyre",
                "film?",
                Some("Nosferatu the Vampyre")
            ),
            None
        );
        let items = answer_items("Subway, Nosferatu", "film?", Some("Possession, Nosferatu"))
            .unwrap_or_default();
        assert!(items.iter().all(|i| i.key != " nosferatu "));
        assert!(items.iter().any(|i| i.key == " subway "));
    }
}

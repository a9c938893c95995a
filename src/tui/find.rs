//! Finding steps in an opened run, off the drawing path: the search (`/`: a step's label matched
//! fuzzily, or its content holding the typed text), the timeline filter (`is:failed`,
//! `is:suspect`, `is:shortlist`, `is:container`, `kind:KIND`, `agent:NAME`, `-` before a term to
//! exclude, and
//! words the step must hold), and the snippet of a step's content around a match for the rows on
//! screen. A step's content is what the detail pane shows of it: input, output, error, tool call,
//! documents, memory, decision, attributes and other fields; JSON keys and numbers count as text.
//! Pure functions over the document; nothing here draws or does I/O.

use super::app::Document;
use super::widgets::inert_text::one_line;
use crate::analysis::model::Json;
use crate::analysis::model::Step;
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use rayon::prelude::*;
use regex::Regex;
use serde_json::Value;

/// Steps each search thread takes at a time.
const PAR_CHUNK: usize = 2048;
/// Shortest query looked for in the steps' content (a shorter one would match nearly
/// everything; the labels are still matched).
pub const MIN_CONTENT_QUERY: usize = 2;
/// Columns of a snippet before its match.
const SNIPPET_BEFORE: usize = 16;
/// Bytes of a matched text read around the match for its snippet.
const SNIPPET_BYTES: usize = 400;

/// The steps matching a query, ascending.
#[derive(Clone, Debug, Default)]
pub struct SearchHits {
    /// The query they answer.
    pub query: String,
    /// Matching step indices, ascending.
    pub steps: Vec<usize>,
    /// The pattern the steps' content was searched with (`None` for a query too short to look
    /// for in the content, and for a filter): the rows on screen draw their snippets with it, so
    /// a frame compiles nothing.
    pub content: Option<Regex>,
}

/// A case-insensitive literal pattern for `text` (`None` for an empty text).
pub fn pattern(text: &str) -> Option<Regex> {
    if text.is_empty() {
        return None;
    }
    regex::RegexBuilder::new(&regex::escape(text))
        .case_insensitive(true)
        .size_limit(1 << 20)
        .build()
        .ok()
}

/// The steps whose label fuzzy-matches `query` or whose content holds it (ignoring case; only
/// from [`MIN_CONTENT_QUERY`] characters). An empty query matches nothing. When `previous`
/// answered a prefix of `query`, only its matches are looked at again: a step that does not match
/// a query cannot match a longer one.
pub fn search(doc: &Document, query: &str, previous: Option<&SearchHits>) -> SearchHits {
    let content = (query.chars().count() >= MIN_CONTENT_QUERY)
        .then(|| pattern(query))
        .flatten();
    let steps = if query.is_empty() {
        Vec::new()
    } else {
        let is_match = |m: &mut SkimMatcherV2, i: usize| {
            doc.labels
                .get(i)
                .is_some_and(|l| m.fuzzy_match(l, query).is_some())
                || content.as_ref().is_some_and(|re| {
                    // The id too: an opaque one is not in the label (issue 26).
                    doc.run.steps.get(i).is_some_and(|s| {
                        re.is_match(s.id.as_str()) || content_find(s, re).is_some()
                    })
                })
        };
        // A query too short to be looked for in the content matched labels only: its answer
        // cannot be narrowed into a longer query's.
        let reusable = |p: &&SearchHits| {
            p.query.chars().count() >= MIN_CONTENT_QUERY && query.starts_with(p.query.as_str())
        };
        match previous.filter(reusable) {
            Some(p) => p
                .steps
                .par_iter()
                .with_min_len(PAR_CHUNK)
                .map_init(SkimMatcherV2::default, |m, &i| is_match(m, i).then_some(i))
                .flatten()
                .collect(),
            None => (0..doc.run.steps.len())
                .into_par_iter()
                .with_min_len(PAR_CHUNK)
                .map_init(SkimMatcherV2::default, |m, i| is_match(m, i).then_some(i))
                .flatten()
                .collect(),
        }
    };
    SearchHits {
        query: query.to_owned(),
        steps,
        content,
    }
}

/// One term of a filter.
#[derive(Debug)]
enum Term {
    Failed,
    Suspect,
    Shortlist,
    Container,
    Kind(String),
    Agent(String),
    Text(Regex),
}

/// A parsed filter: terms that must hold and terms that must not.
#[derive(Debug, Default)]
pub struct Filter {
    must: Vec<Term>,
    must_not: Vec<Term>,
}

impl Filter {
    /// Parses `is:failed kind:tool -agent:planner refund`; an unknown `is:` is an error that
    /// names the known ones.
    pub fn parse(text: &str) -> Result<Filter, String> {
        let mut f = Filter::default();
        for word in text.split_whitespace() {
            let (neg, w) = match word.strip_prefix('-') {
                Some(rest) if !rest.is_empty() => (true, rest),
                _ => (false, word),
            };
            let lower = w.to_lowercase();
            let term = if let Some(v) = lower.strip_prefix("is:") {
                match v {
                    "failed" | "error" | "errors" => Term::Failed,
                    "suspect" | "suspects" => Term::Suspect,
                    "shortlist" | "shortlisted" => Term::Shortlist,
                    "container" | "containers" => Term::Container,
                    other => {
                        return Err(format!(
                            "is:{other} is not known: write is:failed, is:suspect, is:shortlist or is:container"
                        ));
                    }
                }
            } else if let Some(v) = lower.strip_prefix("kind:") {
                Term::Kind(v.to_owned())
            } else if let Some(v) = lower.strip_prefix("agent:") {
                Term::Agent(v.to_owned())
            } else {
                match pattern(w) {
                    Some(re) => Term::Text(re),
                    None => continue,
                }
            };
            if neg {
                f.must_not.push(term);
            } else {
                f.must.push(term);
            }
        }
        Ok(f)
    }

    fn holds(term: &Term, doc: &Document, i: usize, step: &Step) -> bool {
        match term {
            Term::Failed => step.failed(),
            Term::Suspect => doc.suspect_of.get(i).copied().flatten().is_some(),
            Term::Shortlist => doc.shortlisted.contains(&i),
            Term::Container => {
                step.is_container() || doc.has_children.get(i).copied().unwrap_or(false)
            }
            Term::Kind(k) => step.kind_label().eq_ignore_ascii_case(k),
            Term::Agent(a) => step
                .agent
                .as_deref()
                .is_some_and(|x| x.to_lowercase().contains(a.as_str())),
            Term::Text(re) => {
                doc.labels.get(i).is_some_and(|l| re.is_match(l))
                    || re.is_match(step.id.as_str())
                    || content_find(step, re).is_some()
            }
        }
    }

    /// True when step `i` passes.
    pub fn keeps(&self, doc: &Document, i: usize) -> bool {
        let Some(step) = doc.run.steps.get(i) else {
            return false;
        };
        self.must.iter().all(|t| Filter::holds(t, doc, i, step))
            && !self.must_not.iter().any(|t| Filter::holds(t, doc, i, step))
    }
}

/// The steps a filter keeps, or why the filter is not understood.
pub fn filter(doc: &Document, query: &str) -> Result<SearchHits, String> {
    let f = Filter::parse(query)?;
    let steps = (0..doc.run.steps.len())
        .into_par_iter()
        .with_min_len(PAR_CHUNK)
        .filter(|&i| f.keeps(doc, i))
        .collect();
    Ok(SearchHits {
        query: query.to_owned(),
        steps,
        content: None,
    })
}

/// Where `re` matches a step's content: the text it matched in.
pub fn content_find<'a>(step: &'a Step, re: &Regex) -> Option<std::borrow::Cow<'a, str>> {
    let mut found = None;
    visit_step(step, &mut |t| {
        if found.is_none() && re.is_match(&t) {
            found = Some(t);
        }
        found.is_some()
    });
    found
}

/// A piece of a step's content around a match: before, the match, after (one line, inert).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snippet {
    /// The text before the match.
    pub before: String,
    /// The match.
    pub matched: String,
    /// The text after it.
    pub after: String,
}

/// The snippet of a step's content around the first match of `re`.
pub fn snippet(step: &Step, re: &Regex) -> Option<Snippet> {
    let text = content_find(step, re)?;
    let m = re.find(&text)?;
    let from = floor(&text, m.start().saturating_sub(SNIPPET_BEFORE * 4));
    let before_raw = text.get(from..m.start()).unwrap_or("");
    let before: String = {
        let mut line = one_line(before_raw, SNIPPET_BYTES, usize::MAX);
        // The space before the match is kept (one_line trims).
        if before_raw.ends_with(char::is_whitespace) && !line.is_empty() {
            line.push(' ');
        }
        let chars: Vec<char> = line.chars().collect();
        let skip = chars.len().saturating_sub(SNIPPET_BEFORE);
        let mut s: String = chars.into_iter().skip(skip).collect();
        if skip > 0 || from > 0 {
            s.insert(0, '…');
        }
        s
    };
    let matched = one_line(text.get(m.range()).unwrap_or(""), SNIPPET_BYTES, 80);
    let after_raw = text.get(m.end()..).unwrap_or("");
    let mut after = one_line(after_raw, SNIPPET_BYTES, 200);
    if after_raw.starts_with(char::is_whitespace) && !after.is_empty() {
        after.insert(0, ' ');
    }
    Some(Snippet {
        before,
        matched,
        after,
    })
}

fn floor(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Calls `f` on each text of a step's content until it returns true.
fn visit_step<'a>(step: &'a Step, f: &mut dyn FnMut(std::borrow::Cow<'a, str>) -> bool) {
    use std::borrow::Cow;
    if let Some(e) = &step.error
        && f(Cow::Borrowed(e.as_str()))
    {
        return;
    }
    let mut values: Vec<&'a Json> = Vec::new();
    if let Some(c) = &step.tool {
        if f(Cow::Borrowed(c.name.as_str())) {
            return;
        }
        values.push(&c.arguments);
    }
    values.extend(step.input.iter());
    values.extend(step.output.iter());
    for v in values {
        if visit_json(v, f) {
            return;
        }
    }
    for m in step.messages() {
        if f(Cow::Borrowed(m.content.as_str())) {
            return;
        }
        for c in &m.tool_calls {
            if f(Cow::Borrowed(c.arguments.as_str())) {
                return;
            }
        }
    }
    for d in step.documents.iter().flatten() {
        for t in [d.id.as_deref(), d.source.as_deref(), Some(d.text.as_str())]
            .into_iter()
            .flatten()
        {
            if f(Cow::Borrowed(t)) {
                return;
            }
        }
    }
    if let Some(m) = &step.memory
        && (f(Cow::Borrowed(m.key.as_str())) || visit_json(&m.value, f))
    {
        return;
    }
    if let Some(d) = &step.decision {
        if f(Cow::Borrowed(d.chosen.as_str())) {
            return;
        }
        for o in &d.options {
            if f(Cow::Borrowed(o.id.as_str())) {
                return;
            }
        }
    }
    for map in [step.attributes(), step.extra()] {
        for (k, v) in map {
            if f(Cow::Borrowed(k.as_str())) || visit_value(v, f) {
                return;
            }
        }
    }
}

/// Calls `f` on each string, number and key of a JSON value until it returns true; returns true
/// when it did. Depth-first with an explicit stack, so deep values cannot overflow it.
fn visit_value<'a>(v: &'a Value, f: &mut dyn FnMut(std::borrow::Cow<'a, str>) -> bool) -> bool {
    use std::borrow::Cow;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        let stop = match v {
            Value::String(s) => f(Cow::Borrowed(s.as_str())),
            Value::Number(n) => f(Cow::Owned(n.to_string())),
            Value::Bool(_) | Value::Null => false,
            Value::Array(a) => {
                stack.extend(a.iter().rev());
                false
            }
            Value::Object(o) => {
                let mut stop = false;
                for (k, x) in o.iter().rev() {
                    stack.push(x);
                    stop = stop || f(Cow::Borrowed(k.as_str()));
                }
                stop
            }
        };
        if stop {
            return true;
        }
    }
    false
}

/// [`visit_value`] for a step's payload.
fn visit_json<'a>(v: &'a Json, f: &mut dyn FnMut(std::borrow::Cow<'a, str>) -> bool) -> bool {
    use std::borrow::Cow;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        let stop = match v {
            Json::String(s) => f(Cow::Borrowed(s)),
            Json::Number(n) => f(Cow::Owned(n.to_string())),
            Json::Bool(_) | Json::Null => false,
            Json::Array(a) => {
                stack.extend(a.iter().rev());
                false
            }
            Json::Object(o) => {
                let mut stop = false;
                for (k, x) in o.iter().rev() {
                    stack.push(x);
                    stop = stop || f(Cow::Borrowed(k));
                }
                stop
            }
        };
        if stop {
            return true;
        }
    }
    false
}

/// The first match after `from` (or before it, going back), wrapping around.
pub fn next_hit(hits: &SearchHits, from: Option<usize>, forward: bool) -> Option<usize> {
    let s = &hits.steps;
    let first = *s.first()?;
    let last = *s.last()?;
    let Some(from) = from else {
        return Some(if forward { first } else { last });
    };
    if forward {
        let i = s.partition_point(|&x| x <= from);
        Some(s.get(i).copied().unwrap_or(first))
    } else {
        let i = s.partition_point(|&x| x < from);
        Some(
            i.checked_sub(1)
                .and_then(|j| s.get(j).copied())
                .unwrap_or(last),
        )
    }
}

/// The first match at or after `from`, wrapping around (live search as you type).
pub fn hit_at_or_after(hits: &SearchHits, from: usize) -> Option<usize> {
    let s = &hits.steps;
    let i = s.partition_point(|&x| x < from);
    s.get(i).or(s.first()).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::{Run, RunStatus, StepKind, ToolCall};
    use crate::analysis::report::Report;
    use serde_json::json;

    fn doc() -> Document {
        let mut run = Run::new("r", RunStatus::Failed);
        let mut s1 = Step::new("s1", StepKind::User);
        s1.output = Some(json!("I want a refund for order 120").into());
        let mut s2 = Step::new("s2", StepKind::Llm);
        s2.name = Some("planner".to_owned());
        s2.agent = Some("Planner".to_owned());
        s2.output = Some(json!({"plan": "look it up", "amount": 120}).into());
        let mut s3 = Step::new("s3", StepKind::Tool);
        s3.tool = Some(Box::new(ToolCall {
            name: "create_event".to_owned(),
            arguments: json!({"start": "Friday"}).into(),
            call_id: None,
        }));
        s3.error = Some("invalid start".to_owned());
        let mut s4 = Step::new("s4", StepKind::Llm);
        s4.output = Some(json!("Your REFUND is on its way").into());
        run.steps = vec![s1, s2, s3, s4];
        run.reindex();
        let mut report: Report = serde_json::from_str(include_str!(
            "../../tests/fixtures/tui/calendar.report.json"
        ))
        .expect("fixture");
        report.suspects.truncate(1);
        report.suspects[0].step = "s3".to_owned();
        report.confidence.shortlist = vec!["s3".to_owned()];
        Document::new(run, report, None)
    }

    #[test]
    fn search_matches_labels_fuzzily_and_content_literally() {
        let d = doc();
        assert_eq!(
            search(&d, "crev", None).steps,
            vec![2],
            "fuzzy on the label"
        );
        assert_eq!(
            search(&d, "refund", None).steps,
            vec![0, 3],
            "content, any case"
        );
        assert_eq!(
            search(&d, "120", None).steps,
            vec![0, 1],
            "text and numbers"
        );
        assert_eq!(search(&d, "Friday", None).steps, vec![2], "tool arguments");
        assert!(search(&d, "", None).steps.is_empty());
        assert!(search(&d, "zzzq", None).steps.is_empty());
        let first = search(&d, "re", None);
        assert_eq!(search(&d, "refund", Some(&first)).steps, vec![0, 3]);
        // A one-letter query matched labels only: it is not narrowed into 'refund'.
        let short = search(&d, "r", None);
        assert!(!short.steps.contains(&3), "{:?}", short.steps);
        assert_eq!(search(&d, "refund", Some(&short)).steps, vec![0, 3]);
    }

    #[test]
    fn filters_combine_terms_and_exclusions() {
        let d = doc();
        let f = |q: &str| filter(&d, q).map(|h| h.steps);
        assert_eq!(f("is:failed"), Ok(vec![2]));
        assert_eq!(f("is:suspect"), Ok(vec![2]));
        assert_eq!(f("kind:llm"), Ok(vec![1, 3]));
        assert_eq!(f("kind:llm -agent:plan"), Ok(vec![3]));
        assert_eq!(f("agent:planner"), Ok(vec![1]));
        assert_eq!(f("refund kind:llm"), Ok(vec![3]));
        assert_eq!(f("-is:failed"), Ok(vec![0, 1, 3]));
        assert!(f("is:nothing").unwrap_err().contains("is:failed"));
    }

    #[test]
    fn a_snippet_shows_the_match_in_its_text() {
        let d = doc();
        let re = pattern("refund").unwrap();
        let s = snippet(&d.run.steps[3], &re).unwrap();
        assert_eq!(
            (s.before.as_str(), s.matched.as_str(), s.after.as_str()),
            ("Your ", "REFUND", " is on its way")
        );
    }

    #[test]
    fn next_and_previous_wrap_around() {
        let h = SearchHits {
            query: "x".into(),
            steps: vec![2, 5, 9],
            content: None,
        };
        assert_eq!(next_hit(&h, Some(5), true), Some(9));
        assert_eq!(next_hit(&h, Some(9), true), Some(2));
        assert_eq!(next_hit(&h, Some(5), false), Some(2));
        assert_eq!(next_hit(&h, Some(2), false), Some(9));
        assert_eq!(next_hit(&h, None, true), Some(2));
        assert_eq!(hit_at_or_after(&h, 5), Some(5));
        assert_eq!(hit_at_or_after(&h, 10), Some(2));
        assert_eq!(next_hit(&SearchHits::default(), Some(1), true), None);
    }
}

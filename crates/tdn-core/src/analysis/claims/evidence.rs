//! The evidence a claim is checked against (docs/how-it-decides.md, "Claims"): retrieved
//! documents, successful tool results, memory reads and the user's own messages, each tagged with
//! its step, plus failed calls for claims that say something did not happen, and the agent's own
//! instructions (system messages). Split into passages and indexed by term, so each claim looks
//! only at passages sharing a term with it. A result written as JSON also gives one passage per
//! record (`records`), whose numbers keep their keys; the whole result still supports claims,
//! but only a single record can contradict one.
//!
//! Only the terms of the claims are indexed (issue 11): a passage is kept only when it holds
//! one of them, since no other passage can be a candidate, and a number a passage gives that no
//! claim names is counted as "another number" without an id of its own.

use super::passage_terms::{self, Number, Reader, Reading};
use super::records::{KeyWords, KeyedNumber, json_of, records_with};
use crate::analysis::links::tokens::{clip, sentences};
use crate::analysis::links::{StepTexts, flat_text};
use crate::analysis::model::{Run, StepKind};
use crate::analysis::params::MAX_EVIDENCE_PASSAGES;
use hashbrown::HashMap;
use hashbrown::HashSet;

/// The term id of a number that no claim names: it equals no claim's number.
const OTHER_TERM: u32 = u32::MAX;

/// A text shorter than this is one passage; a longer one is split into sentences.
const WHOLE_PASSAGE_BYTES: usize = 400;
/// A passage is cut to this many bytes.
const PASSAGE_BYTES: usize = 2_000;
/// A term found in more passages than this is too common to find candidates with.
const COMMON_TERM_POSTINGS: usize = 20_000;
/// At most this many candidate passages are scored per claim.
const MAX_CANDIDATES: usize = 50_000;

/// Where a passage came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// A retrieved document (or a document unit).
    Document,
    /// The output of a tool call that succeeded.
    ToolResult,
    /// A tool call that failed: its error and arguments.
    FailedCall,
    /// A memory read.
    Memory,
    /// The user's own message (or the task); questions are left out, they assert nothing.
    User,
    /// A search that returned nothing: its query, for claims that something was not found.
    EmptySearch,
    /// The agent's instructions: a system message, or a context unit of kind `instruction`.
    Instruction,
}

/// A number a passage gives, for contradictions: whether it is money, and for a record the
/// key it sits under.
#[derive(Clone, Debug)]
pub struct Counted {
    /// Its term id.
    pub term: u32,
    /// Written as money (`$80`), or under a key naming money (`amount`).
    pub money: bool,
    /// For a record: the stemmed words of its key.
    pub key: Vec<String>,
}

/// One passage of evidence.
#[derive(Clone, Debug)]
pub struct Passage {
    /// The step it came from (None: the run's task).
    pub step: Option<usize>,
    /// Where it came from.
    pub kind: SourceKind,
    /// Marked outdated by the recorder.
    pub outdated: bool,
    /// The passage text.
    pub text: String,
    /// The numbers it gives (not those inside ids).
    pub numbers: Vec<Counted>,
    /// A JSON record: its numbers carry keys.
    pub keyed: bool,
    /// It may contradict a claim (not a whole JSON result holding several records).
    pub contradicts: bool,
    /// Its term ids, sorted.
    terms: Vec<u32>,
}

/// Every passage of the run holding a claim's term, with an index from term to passages.
#[derive(Debug, Default)]
pub struct EvidenceIndex {
    passages: Vec<Passage>,
    /// Passages looked at, kept or not (the cap counts them all).
    seen: usize,
    /// The terms of the claims: only these get ids.
    wanted: HashSet<String>,
    ids: HashMap<String, u32>,
    postings: Vec<Vec<u32>>,
    /// The system prompts already added, each once.
    instructions: HashSet<String>,
    /// Reads the passages' terms (by the wanted terms' indexes).
    reader: Reader,
    /// The id of each wanted term (by its index in `reader`), once a passage held it.
    wanted_ids: Vec<Option<u32>>,
    /// The words of the results' keys.
    keys: KeyWords,
}

/// At most this many distinct system prompts are read from the steps' messages.
const MAX_INSTRUCTIONS: usize = 16;
/// A message list read for system prompts has at most this many messages looked at.
const MAX_MESSAGES: usize = 256;
/// A string of a result is read as JSON itself when it is at most this long.
const MAX_NESTED_JSON_BYTES: usize = 4 * 1024 * 1024;
/// JSON held in a string is read this many levels deep.
const MAX_NESTED_DEPTH: usize = 3;

/// The texts of the system (or developer) messages of a chat message list, as a model step's
/// input records them: `[{"role": "system", "content": "..."}, ...]`, alone or under `messages`.
fn system_messages(input: &crate::analysis::model::Json) -> Vec<String> {
    use crate::analysis::model::Json;
    let list = match input {
        Json::Array(a) => a,
        Json::Object(_) => match input.get("messages") {
            Some(Json::Array(a)) => a,
            _ => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    list.iter()
        .take(MAX_MESSAGES)
        .filter(|m| {
            m.get("role").and_then(Json::as_str).is_some_and(|r| {
                r.eq_ignore_ascii_case("system") || r.eq_ignore_ascii_case("developer")
            })
        })
        .filter_map(|m| m.get("content"))
        .map(flat_text)
        .filter(|t| !t.trim().is_empty())
        .collect()
}

/// The text of a tool's result, its string and number leaves one per line, with a string that
/// holds JSON itself (a retriever's documents sent on as a JSON string) read as that JSON, so
/// its texts come out plain rather than escaped.
fn result_text(out: &crate::analysis::model::Json) -> String {
    let mut text = String::new();
    result_leaves(out, 0, &mut text);
    text
}

/// [`result_text`] of one value. Recursive: JSON is nested at most about 128 deep (serde_json's
/// limit when it was read), and a string is read as JSON at most [`MAX_NESTED_DEPTH`] times.
fn result_leaves(v: &crate::analysis::model::Json, depth: usize, out: &mut String) {
    use crate::analysis::model::Json;
    if out.len() >= crate::analysis::params::LINK_SCAN_BYTES {
        return;
    }
    match v {
        Json::String(s) => {
            let t = s.trim();
            let looks = depth < MAX_NESTED_DEPTH
                && t.len() <= MAX_NESTED_JSON_BYTES
                && ((t.starts_with('{') && t.ends_with('}'))
                    || (t.starts_with('[') && t.ends_with(']')));
            match looks
                .then(|| serde_json::from_str::<Json>(t).ok())
                .flatten()
                .filter(|p| matches!(p, Json::Object(_) | Json::Array(_)))
            {
                Some(inner) => result_leaves(&inner, depth + 1, out),
                None => {
                    out.push_str(s);
                    out.push('\n');
                }
            }
        }
        Json::Number(n) => {
            out.push_str(&n.to_string());
            out.push('\n');
        }
        Json::Array(a) => a.iter().for_each(|x| result_leaves(x, depth, out)),
        Json::Object(o) => o.values().for_each(|x| result_leaves(x, depth, out)),
        Json::Bool(_) | Json::Null => {}
    }
}

/// The reading of sentence `k` of `all`, read now unless `readings` holds it (taken from there).
fn reading_at(
    reader: &mut Reader,
    all: &[&str],
    readings: &mut [Option<Reading>],
    k: usize,
) -> Reading {
    match readings.get_mut(k).and_then(Option::take) {
        Some(r) => r,
        None => reader.read(all.get(k).copied().unwrap_or("")),
    }
}

impl EvidenceIndex {
    /// Collects and indexes the evidence of `run` for claims whose terms are `wanted`.
    pub fn build(run: &Run, texts: &StepTexts, wanted: HashSet<String>) -> EvidenceIndex {
        let reader = Reader::new(&wanted);
        let mut ix = EvidenceIndex {
            wanted_ids: vec![None; wanted.len()],
            wanted,
            reader,
            ..EvidenceIndex::default()
        };
        let has_user_step = run.steps.iter().any(|s| s.kind == StepKind::User);
        // A system message after the agent's last decision (a termination notice repeating the
        // answer) informed no decision: it is no source of the answer's claims.
        let last_decision = run
            .steps
            .iter()
            .rposition(|s| s.kind.is_model() && !s.is_container());
        if !has_user_step && let Some(task) = &run.task {
            ix.add_statements(None, task);
        }
        for (i, step) in run.steps.iter().enumerate() {
            match step.kind {
                StepKind::User => ix.add_statements(Some(i), &texts.produced(i)),
                StepKind::Retrieval => match &step.documents {
                    Some(docs) if docs.is_empty() => {
                        ix.add(Some(i), SourceKind::EmptySearch, false, &texts.consumed(i));
                    }
                    Some(docs) => {
                        for d in docs {
                            ix.add(Some(i), SourceKind::Document, d.outdated, &d.text);
                        }
                    }
                    None => {}
                },
                StepKind::MemoryRead => {
                    if let Some(m) = &step.memory {
                        ix.add(Some(i), SourceKind::Memory, false, &flat_text(&m.value));
                    }
                }
                StepKind::Tool => {
                    if step.failed() {
                        let mut t = step.error.clone().unwrap_or_default();
                        if let Some(call) = &step.tool {
                            t.push('\n');
                            t.push_str(&flat_text(&call.arguments));
                        }
                        ix.add(Some(i), SourceKind::FailedCall, false, &t);
                    } else if let Some(out) = &step.output {
                        ix.add_result(i, out);
                    }
                }
                // The message itself: context units a system step loaded are added below as
                // what they are (an outdated document stays outdated).
                StepKind::System if last_decision.is_none_or(|d| i < d) => {
                    if let Some(out) = &step.output {
                        ix.add(Some(i), SourceKind::Instruction, false, &flat_text(out));
                    }
                }
                _ if last_decision.is_some_and(|d| i <= d) => {
                    // The system prompt a model step was sent with its messages: the agent's
                    // instructions, once however many calls repeat it.
                    if let Some(input) = &step.input {
                        for text in system_messages(input) {
                            if ix.instructions.len() < MAX_INSTRUCTIONS
                                && ix.instructions.insert(text.clone())
                            {
                                ix.add(Some(i), SourceKind::Instruction, false, &text);
                            }
                        }
                    }
                }
                _ => {}
            }
            if ix.seen >= MAX_EVIDENCE_PASSAGES {
                break;
            }
        }
        ix.add_units(run);
        ix
    }

    /// Units of kind document, tool_result or memory that reached a model and are not already
    /// recorded by the step that produced them.
    fn add_units(&mut self, run: &Run) {
        let any_context = run.steps.iter().any(|s| s.context.is_some());
        let mut reached: HashMap<&str, usize> = HashMap::new();
        for (i, s) in run.steps.iter().enumerate() {
            for id in s.context.iter().flat_map(|c| c.sent.iter()) {
                reached.entry(id.as_str()).or_insert(i);
            }
        }
        for unit in &run.context_units {
            let kind = match unit.kind.as_str() {
                "document" => SourceKind::Document,
                "tool_result" => SourceKind::ToolResult,
                "memory" => SourceKind::Memory,
                "instruction" | "system" => SourceKind::Instruction,
                _ => continue,
            };
            let first_use = reached.get(unit.id.as_str()).copied();
            if any_context && first_use.is_none() {
                continue;
            }
            let producer = unit
                .produced_by
                .as_ref()
                .and_then(|p| run.step_index(p.as_str()));
            let recorded = producer.and_then(|p| run.steps.get(p)).is_some_and(|s| {
                s.documents.as_ref().is_some_and(|d| !d.is_empty())
                    || (s.kind == StepKind::Tool && s.output.is_some())
                    || s.memory.is_some()
            });
            // A unit known only from the messages a model was sent, with no step that produced
            // it (an observation no tool span records, a system prompt an importer found), is
            // no source of its own: the agent's own words fed back would support its claims.
            let only_in_messages = producer.is_none() && !unit.at.is_empty();
            if recorded || only_in_messages {
                continue;
            }
            let outdated = unit
                .extra
                .get("outdated")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
            self.add(producer.or(first_use), kind, outdated, &unit.text);
            if self.seen >= MAX_EVIDENCE_PASSAGES {
                return;
            }
        }
    }

    /// A user's message: each sentence that is not a question.
    fn add_statements(&mut self, step: Option<usize>, text: &str) {
        for s in sentences(clip(text, crate::analysis::params::LINK_SCAN_BYTES)) {
            if !s.ends_with('?') {
                self.push(step, SourceKind::User, false, s);
            }
            if self.seen >= MAX_EVIDENCE_PASSAGES {
                return;
            }
        }
    }

    /// A successful tool result: the whole of it, and when it is JSON each of its records.
    fn add_result(&mut self, i: usize, out: &crate::analysis::model::Json) {
        let keys = &mut self.keys;
        let recs = json_of(out)
            .map(|v| records_with(&v, keys))
            .unwrap_or_default();
        if recs.len() != 1 {
            let whole = self.passages.len();
            self.add(Some(i), SourceKind::ToolResult, false, &result_text(out));
            if !recs.is_empty() {
                for p in self.passages.get_mut(whole..).unwrap_or(&mut []) {
                    p.contradicts = false;
                }
            }
        }
        for r in recs {
            if self.seen >= MAX_EVIDENCE_PASSAGES {
                return;
            }
            self.push_record(i, &r.text, &r.values, &r.numbers);
        }
    }

    fn add(&mut self, step: Option<usize>, kind: SourceKind, outdated: bool, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        if text.len() <= WHOLE_PASSAGE_BYTES {
            self.push(step, kind, outdated, text);
        } else {
            // Each sentence, and each sentence with its neighbours when together they are
            // short: a document gives a figure on one line and what it is on the next.
            let all: Vec<&str> =
                sentences(clip(text, crate::analysis::params::LINK_SCAN_BYTES)).collect();
            // Each sentence is read once: a passage of three is their readings put together.
            let mut readings: Vec<Option<Reading>> = vec![None; all.len()];
            for (k, s) in all.iter().enumerate() {
                if self.seen >= MAX_EVIDENCE_PASSAGES {
                    return;
                }
                let mine = reading_at(&mut self.reader, &all, &mut readings, k);
                self.push_read(step, kind, outdated, s, &mine);
                if let Some(slot) = readings.get_mut(k) {
                    *slot = Some(mine);
                }
                let from = k.saturating_sub(1);
                let around = all.get(from..(k + 2).min(all.len()));
                if let Some(near) = around.filter(|w| w.len() == 3) {
                    let bytes = near.iter().map(|w| w.len()).sum::<usize>() + near.len() - 1;
                    if bytes <= WHOLE_PASSAGE_BYTES && self.seen < MAX_EVIDENCE_PASSAGES {
                        let joined = near.join(" ");
                        let next = reading_at(&mut self.reader, &all, &mut readings, k + 1);
                        if let Some(slot) = readings.get_mut(k + 1) {
                            *slot = Some(next);
                        }
                        let three: Vec<&Reading> = readings
                            .get(from..k + 2)
                            .unwrap_or(&[])
                            .iter()
                            .flatten()
                            .collect();
                        let reading = match passage_terms::joined(near, &three) {
                            Some(r) if three.len() == 3 => r,
                            _ => self.reader.read(&joined),
                        };
                        self.push_read(step, kind, outdated, &joined, &reading);
                    }
                }
                if self.seen >= MAX_EVIDENCE_PASSAGES {
                    return;
                }
            }
        }
    }

    /// One record of a JSON result: its numbers are counted with their keys.
    fn push_record(&mut self, i: usize, text: &str, values: &str, numbers: &[KeyedNumber]) {
        if self.seen >= MAX_EVIDENCE_PASSAGES {
            return;
        }
        let reading = self.reader.read(values);
        let Some(p) = self.push_indexed(Some(i), SourceKind::ToolResult, text, &reading) else {
            return;
        };
        let counted: Vec<Counted> = numbers
            .iter()
            .filter_map(|n| {
                Some(Counted {
                    term: self.counted_term(&n.number)?,
                    money: n.money,
                    key: n.key.clone(),
                })
            })
            .collect();
        if let Some(pass) = self.passages.get_mut(p) {
            pass.numbers = counted;
            pass.keyed = true;
        }
    }

    /// The id of the wanted term of index `w`, added when new.
    fn intern(&mut self, w: u32) -> Option<u32> {
        let slot = self.wanted_ids.get_mut(usize::try_from(w).ok()?)?;
        let id = match *slot {
            Some(id) => id,
            None => {
                let id = u32::try_from(self.ids.len()).unwrap_or(OTHER_TERM);
                let key = self.reader.key(w).to_owned();
                *self.ids.entry(key).or_insert(id)
            }
        };
        *slot = Some(id);
        if usize::try_from(id).is_ok_and(|i| i == self.postings.len()) {
            self.postings.push(Vec::new());
        }
        Some(id)
    }

    /// The term of a number the passage gives: its id when a claim has it, else
    /// [`OTHER_TERM`]. A number no passage so far gave has none.
    fn counted_term(&self, key: &str) -> Option<u32> {
        if self.wanted.contains(key) {
            self.term_id(key)
        } else {
            Some(OTHER_TERM)
        }
    }

    fn push(
        &mut self,
        step: Option<usize>,
        kind: SourceKind,
        outdated: bool,
        text: &str,
    ) -> Option<usize> {
        if self.seen >= MAX_EVIDENCE_PASSAGES {
            return None;
        }
        let reading = self.reader.read(text);
        self.push_read(step, kind, outdated, text, &reading)
    }

    /// [`Self::push`] of a text already read.
    fn push_read(
        &mut self,
        step: Option<usize>,
        kind: SourceKind,
        outdated: bool,
        text: &str,
        reading: &Reading,
    ) -> Option<usize> {
        let p = self.push_indexed(step, kind, text, reading)?;
        if let Some(pass) = self.passages.get_mut(p) {
            pass.outdated = outdated;
        }
        Some(p)
    }

    /// A passage shown as `text` and matched by the terms of `reading` (of the text itself, or
    /// of a record's values).
    fn push_indexed(
        &mut self,
        step: Option<usize>,
        kind: SourceKind,
        text: &str,
        reading: &Reading,
    ) -> Option<usize> {
        if self.seen >= MAX_EVIDENCE_PASSAGES {
            return None;
        }
        let outdated = false;
        self.seen += 1;
        let p = u32::try_from(self.passages.len()).unwrap_or(u32::MAX);
        let mut terms: Vec<u32> = Vec::new();
        // Ids hold their parts too ('certificate_7504069' holds 7504069), but those parts are
        // not numbers the passage gives.
        for &w in reading.main.iter().chain(&reading.parts) {
            terms.extend(self.intern(w));
        }
        if terms.is_empty() {
            // No claim's term: never a candidate.
            return None;
        }
        let numbers: Vec<Counted> = reading
            .numbers
            .iter()
            .filter_map(|&(n, money)| {
                let term = match n {
                    Number::Wanted(w) => *self.wanted_ids.get(usize::try_from(w).ok()?)?,
                    Number::Other => Some(OTHER_TERM),
                }?;
                Some(Counted {
                    term,
                    money,
                    key: Vec::new(),
                })
            })
            .collect();
        terms.sort_unstable();
        terms.dedup();
        for &t in &terms {
            if let Some(list) = usize::try_from(t)
                .ok()
                .and_then(|i| self.postings.get_mut(i))
            {
                list.push(p);
            }
        }
        self.passages.push(Passage {
            step,
            kind,
            outdated,
            text: clip(text, PASSAGE_BYTES).to_owned(),
            numbers,
            keyed: false,
            contradicts: true,
            terms,
        });
        usize::try_from(p).ok()
    }

    /// The passage at `i`.
    pub fn passage(&self, i: usize) -> Option<&Passage> {
        self.passages.get(i)
    }

    /// The id of a term key, when some passage holds it.
    pub fn term_id(&self, key: &str) -> Option<u32> {
        self.ids.get(key).copied()
    }

    /// True when passage `p` holds term `t`.
    pub fn holds(&self, p: usize, t: u32) -> bool {
        self.passages
            .get(p)
            .is_some_and(|x| x.terms.binary_search(&t).is_ok())
    }

    /// True when the passage holds term `t`.
    pub fn passage_holds(&self, p: &Passage, t: u32) -> bool {
        p.terms.binary_search(&t).is_ok()
    }

    /// The passages sharing at least one of these terms; rare terms are looked up first and
    /// terms held by more than 20,000 passages only when nothing rarer exists.
    pub fn candidates(&self, term_ids: &[u32]) -> Vec<usize> {
        let mut by_rarity: Vec<(usize, u32)> = term_ids
            .iter()
            .filter_map(|&t| {
                let n = usize::try_from(t)
                    .ok()
                    .and_then(|i| self.postings.get(i))?
                    .len();
                Some((n, t))
            })
            .collect();
        by_rarity.sort_unstable();
        let rare_exists = by_rarity.iter().any(|&(n, _)| n <= COMMON_TERM_POSTINGS);
        let mut out: Vec<usize> = Vec::new();
        for (n, t) in by_rarity {
            if rare_exists && n > COMMON_TERM_POSTINGS {
                break;
            }
            if let Some(list) = usize::try_from(t).ok().and_then(|i| self.postings.get(i)) {
                out.extend(list.iter().filter_map(|&p| usize::try_from(p).ok()));
            }
            if out.len() >= MAX_CANDIDATES {
                break;
            }
        }
        out.sort_unstable();
        out.dedup();
        out.truncate(MAX_CANDIDATES);
        out
    }
}

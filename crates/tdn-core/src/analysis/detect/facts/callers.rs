//! Which model step issued each tool call: the latest earlier model step whose output names
//! the tool, else the latest earlier model step.

use super::slots::Slots;
use crate::analysis::links::StepTexts;
use crate::analysis::model::{Run, decides};
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use hashbrown::HashMap;

/// At most this many distinct tool names are looked for in model outputs.
const MAX_TOOL_NAMES: usize = 1_000;
/// A tool name longer than this is not looked for in model outputs (no real tool is named so).
const MAX_TOOL_NAME_BYTES: usize = 256;

pub(super) fn callers(run: &Run, texts: &StepTexts) -> Slots {
    let mut names: Vec<&str> = Vec::new();
    // name -> its place in `names`: one lookup per call, however many names
    let mut index: HashMap<&str, usize> = HashMap::new();
    for s in &run.steps {
        if let Some(c) = &s.tool
            && !c.name.is_empty()
            && c.name.len() <= MAX_TOOL_NAME_BYTES
            && names.len() < MAX_TOOL_NAMES
            && !index.contains_key(c.name.as_str())
        {
            index.insert(&c.name, names.len());
            names.push(&c.name);
        }
    }
    // A contiguous NFA builds in time linear in the names; the automatic choice may build a DFA,
    // whose construction is quadratic in a long name of one repeated letter.
    let ac = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .kind(Some(AhoCorasickKind::ContiguousNFA))
        .build(&names)
        .ok();
    let mut last_mention: Vec<Option<usize>> = vec![None; names.len()];
    let mut last_model: Option<usize> = None;
    let mut out = Slots::with_capacity(run.steps.len());
    // A text of several leaves is joined here, into one buffer for all steps.
    let mut joined = String::new();
    for (i, s) in run.steps.iter().enumerate() {
        let mut caller = None;
        if let Some(c) = &s.tool {
            let mention = index
                .get(c.name.as_str())
                .and_then(|&k| last_mention.get(k).copied().flatten());
            caller = mention.or(last_model);
        }
        out.push(caller);
        if decides(s) {
            last_model = Some(i);
            if let Some(ac) = &ac {
                let text = texts.produced_text(i).joined_in(&mut joined);
                for m in ac.find_iter(text) {
                    let glued =
                        |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                    let before = text.get(..m.start()).and_then(|s| s.chars().next_back());
                    let after = text.get(m.end()..).and_then(|s| s.chars().next());
                    if glued(before) || glued(after) {
                        continue;
                    }
                    if let Some(slot) = last_mention.get_mut(m.pattern().as_usize()) {
                        *slot = Some(i);
                    }
                }
            }
        }
    }
    out
}

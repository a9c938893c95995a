//! Generated runs for the benchmarks (docs/performance.md), in six shapes:
//!
//! - `Repeating`: a few hundred orders, customers and amounts, reused across the run (values
//!   repeat, so the link index stays small);
//! - `Distinct`: every user message, tool result and document brings new order ids, addresses,
//!   amounts, dates and sentences, which later steps pick up from the last twenty (many distinct
//!   values flowing between steps, as a long production run has);
//! - `Vocab` (issue 28): sentences of 14 to 60 words drawn from about 40 common words, with ids,
//!   dates and customers from a few hundred values and amounts among them, half the sentences
//!   quoted from the last twenty: the text of a run made mostly of a few words (see [`Vocab`]
//!   for the knobs);
//! - `Otlp` (issue 28): the same talk as an OTLP JSON export in the GenAI conventions, chat
//!   spans whose `gen_ai.input.messages` hold the system prompt and the last three messages
//!   each time, and `execute_tool` spans with their arguments and results;
//! - `Langfuse` and `SpanRows` (issue 28): the same spans as a Langfuse trace with its
//!   observations (OpenAI-style messages as each generation's input, the tool's arguments and
//!   result as objects) and as span rows (the collector's ClickHouse exporter, `{"data": [...]}`,
//!   every attribute a string); see [`langfuse_export`] and [`span_rows_export`].
//!
//! The first three are `tdn.run/1` files. In the first two, a step cycle of user message, model
//! call (with a thought, a tool call and the context it was sent), tool call (a JSON result that
//! becomes a context unit, a failure every 97 steps), search (a document, some outdated),
//! state-changing call, and model answer; about 470 bytes a step in the distinct shape. The
//! small-vocabulary run cycles through a user message, a model call, a tool call (a JSON result
//! and a context unit), a search, a memory read or write, and a model answer: about 550 bytes a
//! step. Deterministic (a fixed-seed generator), no I/O. `gen_runs.py` beside this file writes
//! the same bytes for the first four shapes, for measuring by hand (`examples/gen_run.rs` writes
//! every shape from this file).

use serde_json::{Value, json};

/// Which values a generated run reuses, and in which format it comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Values repeat.
    Repeating,
    /// Many distinct values flow between steps.
    Distinct,
    /// The text is drawn from a small vocabulary ([`Vocab::default`]).
    Vocab,
    /// The small vocabulary's talk as an OTLP export of GenAI spans.
    Otlp,
    /// The same spans as a Langfuse trace with its observations.
    Langfuse,
    /// The same spans as span rows (the collector's ClickHouse exporter).
    SpanRows,
}

impl Shape {
    /// Every shape.
    pub const ALL: [Shape; 6] = [
        Shape::Repeating,
        Shape::Distinct,
        Shape::Vocab,
        Shape::Otlp,
        Shape::Langfuse,
        Shape::SpanRows,
    ];

    /// Its name in benchmark ids.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Repeating => "repeating",
            Shape::Distinct => "distinct",
            Shape::Vocab => "vocab",
            Shape::Otlp => "otlp",
            Shape::Langfuse => "langfuse",
            Shape::SpanRows => "span-rows",
        }
    }

    /// The shape of this name.
    #[allow(dead_code)]
    pub fn named(name: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|s| s.name() == name)
    }
}

const WORDS: &[&str] = &[
    "customer",
    "order",
    "refund",
    "shipment",
    "account",
    "invoice",
    "ticket",
    "warehouse",
    "carrier",
    "payment",
    "address",
    "policy",
    "balance",
    "package",
    "delivery",
    "return",
    "exchange",
    "support",
    "status",
    "update",
];

/// A small fixed-seed generator (xorshift64*), so runs are the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn word(&mut self) -> &'static str {
        WORDS[usize::try_from(self.below(WORDS.len() as u64)).unwrap_or(0)]
    }
}

#[derive(Clone)]
struct Vals {
    order: String,
    cust: String,
    amount: u64,
    date: String,
    tracking: String,
}

fn new_vals(shape: Shape, i: usize, rng: &mut Rng) -> Vals {
    match shape {
        Shape::Repeating => {
            let k = i % 300;
            Vals {
                order: format!("ORD-{}", 1000 + k),
                cust: format!("cust{}@example.com", k % 50),
                amount: 100 + (k % 40) as u64,
                date: format!("2026-0{}-1{}", 1 + k % 9, k % 10),
                tracking: format!("1Z{:010X}", k),
            }
        }
        _ => Vals {
            order: format!("ORD-{}", 10_000_000 + rng.below(90_000_000)),
            cust: format!("c{}.{}@example.com", rng.below(1_000_000), rng.word()),
            amount: 100 + rng.below(99_900),
            date: format!("2026-{:02}-{:02}", 1 + rng.below(12), 1 + rng.below(28)),
            tracking: format!("1Z{:010X}", rng.below(1 << 40)),
        },
    }
}

fn sentence(shape: Shape, v: &Vals, rng: &mut Rng) -> String {
    let words: Vec<&str> = match shape {
        Shape::Repeating => WORDS.iter().take(8).copied().collect(),
        _ => (0..6 + rng.below(6)).map(|_| rng.word()).collect(),
    };
    format!(
        "The {} {} for {} {} on {}.",
        words[0],
        v.order,
        v.cust,
        words[1..].join(" "),
        v.date
    )
}

/// A run of `n` steps in `shape` (an export of `n` spans for [`Shape::Otlp`]), as JSON text;
/// the small vocabulary at its defaults.
#[allow(dead_code)]
pub fn run_json(shape: Shape, n: usize) -> String {
    match shape {
        Shape::Vocab => vocab_run(n, &Vocab::default()).to_string(),
        Shape::Otlp => otlp_export(n, &Vocab::default()).to_string(),
        Shape::Langfuse => langfuse_export(n, &Vocab::default()).to_string(),
        Shape::SpanRows => span_rows_export(n, &Vocab::default()).to_string(),
        _ => run_value(shape, n).to_string(),
    }
}

/// A run of `n` steps in the repeating or distinct shape (the distinct one for any other), as
/// JSON.
pub fn run_value(shape: Shape, n: usize) -> Value {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut steps = Vec::with_capacity(n);
    let mut units: Vec<Value> = Vec::new();
    let mut unit_ids: Vec<String> = Vec::new();
    let mut recent: Vec<Vals> = vec![new_vals(shape, 0, &mut rng)];
    for i in 0..n {
        let id = format!("s{i}");
        let prev = match shape {
            Shape::Distinct => {
                let from = recent.len().saturating_sub(20);
                let k =
                    from + usize::try_from(rng.below((recent.len() - from) as u64)).unwrap_or(0);
                recent[k].clone()
            }
            _ => recent[recent.len() - 1].clone(),
        };
        let step = match i % 6 {
            0 => {
                let v = new_vals(shape, i, &mut rng);
                let s = sentence(shape, &v, &mut rng);
                let out = format!(
                    "Please check {} for {}; it was due {}. {s} I have been waiting for two weeks and nobody answers the phone, so please tell me what happened to it.",
                    v.order, v.cust, v.date
                );
                recent.push(v);
                json!({"id": id, "kind": "user", "output": out})
            }
            1 => {
                let available: Vec<&String> = unit_ids.iter().rev().take(6).rev().collect();
                let sent: Vec<&String> = available
                    .iter()
                    .take(available.len().saturating_sub(2))
                    .copied()
                    .collect();
                let (a, b) = (
                    sentence(shape, &prev, &mut rng),
                    sentence(shape, &prev, &mut rng),
                );
                json!({"id": id, "kind": "llm",
                    "input": format!("Look up {} placed by {}.", prev.order, prev.cust),
                    "output": {"thought": format!("I need the current state of {} before I answer; {a} {b}", prev.order),
                               "tool_call": {"name": "get_order", "arguments": {"id": prev.order}}},
                    "context": {"available": available, "sent": sent},
                    "usage": {"input_tokens": 400 + i % 50, "output_tokens": 30}})
            }
            2 => {
                let v = new_vals(shape, i, &mut rng);
                let note = sentence(shape, &v, &mut rng);
                let mut s = json!({"id": id, "kind": "tool",
                    "tool": {"name": "get_order", "arguments": {"id": prev.order}}});
                if i % 97 == 2 {
                    s["error"] = json!(format!("order {} not found", prev.order));
                } else {
                    s["output"] = json!({"id": prev.order, "total": v.amount, "tracking": v.tracking,
                        "status": "shipped", "note": note});
                    let uid = format!("u{i}");
                    units.push(json!({"id": uid, "kind": "tool_result",
                        "text": sentence(shape, &v, &mut rng), "produced_by": id, "tokens": 20}));
                    unit_ids.push(uid);
                }
                recent.push(v);
                s
            }
            3 => {
                let v = new_vals(shape, i, &mut rng);
                let doc = match shape {
                    Shape::Distinct => format!("doc-{i}"),
                    _ => format!("doc-{}", i % 50),
                };
                let text = format!(
                    "Refund policy {}: orders like {} are refunded ${} within 30 days. {} Returns need the original packaging and a receipt; gift cards and final-sale items are not refunded.",
                    2020 + i % 6,
                    v.order,
                    v.amount,
                    sentence(shape, &v, &mut rng)
                );
                recent.push(v);
                json!({"id": id, "kind": "retrieval", "input": format!("refund policy for {}", prev.order),
                    "documents": [{"id": doc, "text": text, "outdated": i % 12 == 3}]})
            }
            4 => {
                let tool = if i % 50 == 4 {
                    "issue_refund"
                } else {
                    "track_package"
                };
                json!({"id": id, "kind": "tool",
                    "tool": {"name": tool, "arguments": {"id": prev.order, "amount": prev.amount}},
                    "output": format!("tracking {} for {} sent to {}. {}", prev.tracking, prev.order, prev.cust, sentence(shape, &prev, &mut rng))})
            }
            _ => json!({"id": id, "kind": "llm", "input": format!("Summarise {}", prev.order),
            "output": format!(
                "The refund for {} is ${} and the call is on {}. {} I will let {} know by e-mail and close the ticket once the carrier confirms the return.",
                prev.order, prev.amount, prev.date, sentence(shape, &prev, &mut rng), prev.cust
            )}),
        };
        steps.push(step);
    }
    let last = recent
        .last()
        .cloned()
        .unwrap_or_else(|| new_vals(shape, 0, &mut rng));
    let tools: Vec<Value> = ["get_order", "issue_refund", "track_package", "search_docs"]
        .iter()
        .map(|t| {
            json!({"name": t, "description": format!("{t} tool"), "mutates": t.starts_with("issue"),
                "parameters": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}})
        })
        .collect();
    json!({
        "format": "tdn.run/1",
        "id": format!("gen-{}-{n}", shape.name()),
        "status": "failed",
        "task": format!("Refund order {} and book a call", recent.first().map_or("", |v| v.order.as_str())),
        "final_answer": format!("Your refund of ${} for {} has been issued.", last.amount, last.order),
        "model": {"name": "gen", "context_window": 128_000},
        "tools": tools,
        "context_units": units,
        "steps": steps,
    })
}

/// The knobs of the small-vocabulary shapes.
#[derive(Clone, Copy, Debug)]
pub struct Vocab {
    /// Words the sentences are drawn from (the common words below, then made-up ones).
    pub words: usize,
    /// Words in a sentence, at least and at most.
    pub sentence: (usize, usize),
    /// Distinct ids, dates and customers.
    pub pool: u64,
    /// Digits of an order id.
    pub digits: u32,
    /// Percent of the sentences quoted from the last twenty rather than new.
    pub reuse: u64,
    /// Percent of new sentences holding the order id (half as many a date, an amount; a
    /// quarter a customer).
    pub mix: u64,
}

impl Default for Vocab {
    fn default() -> Self {
        Vocab {
            words: 40,
            sentence: (14, 60),
            pool: 300,
            digits: 5,
            reuse: 50,
            mix: 25,
        }
    }
}

/// The small vocabulary: the words a support agent's text is mostly made of.
const COMMON: &[&str] = &[
    "customer",
    "order",
    "refund",
    "shipment",
    "account",
    "invoice",
    "ticket",
    "warehouse",
    "carrier",
    "payment",
    "address",
    "policy",
    "balance",
    "package",
    "delivery",
    "return",
    "exchange",
    "support",
    "status",
    "update",
    "the",
    "a",
    "to",
    "for",
    "and",
    "is",
    "was",
    "of",
    "on",
    "in",
    "with",
    "we",
    "will",
    "please",
    "your",
    "has",
    "been",
    "not",
    "can",
    "check",
];

const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ren", "tas", "vo", "pel", "dri", "su", "nor", "bex", "qui", "ta", "zo",
    "fen", "gar",
];

/// `size` words: the common ones, then made-up words of two or three syllables.
fn vocabulary(size: usize) -> Vec<String> {
    let mut out: Vec<String> = COMMON.iter().take(size).map(|w| (*w).to_owned()).collect();
    let n = SYLLABLES.len();
    let mut k = 0;
    while out.len() < size {
        let mut w = format!("{}{}", SYLLABLES[k % n], SYLLABLES[(k / n) % n]);
        if k >= n * n {
            w.push_str(SYLLABLES[(k / (n * n)) % n]);
        }
        out.push(w);
        k += 1;
    }
    out
}

/// What a step speaks of.
#[derive(Clone)]
struct Fact {
    order: String,
    date: String,
    cust: String,
    amount: u64,
}

/// Sentences of a small vocabulary with a fact's values among them, and the last twenty
/// sentences written, which later steps quote.
struct Talk {
    rng: Rng,
    p: Vocab,
    words: Vec<String>,
    recent: Vec<String>,
}

impl Talk {
    fn new(seed: u64, p: &Vocab) -> Talk {
        Talk {
            rng: Rng(seed),
            p: *p,
            words: vocabulary(p.words.max(1)),
            recent: Vec::new(),
        }
    }

    fn pick(&mut self, n: u64) -> u64 {
        self.rng.below(n)
    }

    fn order(&self, k: u64) -> String {
        let digits = self.p.digits.clamp(1, 19);
        let w = digits as usize;
        format!("ORD-{:0w$}", (k * 7919) % 10u64.pow(digits))
    }

    fn date(k: u64) -> String {
        format!("2026-{:02}-{:02}", 1 + k % 12, 1 + (k / 12) % 28)
    }

    fn fact(&mut self) -> Fact {
        let pool = self.p.pool.max(1);
        let order = self.pick(pool);
        let order = self.order(order);
        let date = Talk::date(self.pick(pool));
        let cust = format!("cust{}@example.com", self.pick(pool));
        let amount = 100 + self.pick(99_900);
        Fact {
            order,
            date,
            cust,
            amount,
        }
    }

    /// A new sentence: words of the vocabulary, with the fact's values among them.
    fn fresh(&mut self, f: &Fact) -> String {
        let (lo, hi) = self.p.sentence;
        let (lo, hi) = (lo.max(1), hi.max(lo.max(1)));
        let n = lo + self.pick((hi - lo + 1) as u64) as usize;
        let mut words: Vec<String> = (0..n)
            .map(|_| {
                let k = self.pick(self.words.len() as u64) as usize;
                self.words[k].clone()
            })
            .collect();
        let parts: [(u64, String); 4] = [
            (1, f.order.clone()),
            (2, f.date.clone()),
            (2, format!("${}", f.amount)),
            (4, f.cust.clone()),
        ];
        for (part, value) in parts {
            if self.pick(100) < self.p.mix / part {
                let at = self.pick(n as u64) as usize;
                words[at] = value;
            }
        }
        let mut s = words.join(" ");
        if let Some(first) = s.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        s.push('.');
        self.recent.push(s.clone());
        if self.recent.len() > 20 {
            self.recent.remove(0);
        }
        s
    }

    /// A sentence quoted from the last twenty (`reuse` percent of the time), else a new one.
    fn say(&mut self, f: &Fact) -> String {
        if !self.recent.is_empty() && self.pick(100) < self.p.reuse {
            let k = self.pick(self.recent.len() as u64) as usize;
            return self.recent[k].clone();
        }
        self.fresh(f)
    }
}

/// A small-vocabulary run of `n` steps (see the module docs), as JSON.
pub fn vocab_run(n: usize, p: &Vocab) -> Value {
    let mut talk = Talk::new(0x2545_f491_4f6c_dd1d, p);
    let mut steps = Vec::with_capacity(n);
    let mut units: Vec<Value> = Vec::new();
    let mut unit_ids: Vec<String> = Vec::new();
    let mut f = talk.fact();
    for i in 0..n {
        let id = format!("s{i}");
        let step = match i % 6 {
            0 => {
                f = talk.fact();
                let mut out = talk.fresh(&f);
                if talk.pick(2) == 0 {
                    out.push(' ');
                    out.push_str(&talk.say(&f));
                }
                json!({"id": id, "kind": "user", "output": out})
            }
            1 => {
                let available: Vec<&String> = unit_ids.iter().rev().take(6).rev().collect();
                let sent: Vec<&String> = available
                    .iter()
                    .take(available.len().saturating_sub(2))
                    .copied()
                    .collect();
                let input = format!("Look up {} for {}. {}", f.order, f.cust, talk.say(&f));
                let thought = talk.say(&f);
                json!({"id": id, "kind": "llm", "input": input,
                    "output": {"thought": thought,
                               "tool_call": {"name": "get_order", "arguments": {"id": f.order}}},
                    "context": {"available": available, "sent": sent},
                    "usage": {"input_tokens": 400 + i % 50, "output_tokens": 30}})
            }
            2 => {
                let mut s = json!({"id": id, "kind": "tool",
                    "tool": {"name": "get_order", "arguments": {"id": f.order}}});
                if i % 97 == 2 {
                    s["error"] = json!(format!("order {} not found", f.order));
                } else {
                    let note = talk.fresh(&f);
                    s["output"] =
                        json!({"id": f.order, "total": f.amount, "date": f.date, "note": note});
                    let uid = format!("u{i}");
                    let text = talk.say(&f);
                    units.push(json!({"id": uid, "kind": "tool_result", "text": text,
                        "produced_by": id, "tokens": 40}));
                    unit_ids.push(uid);
                }
                s
            }
            3 => {
                let doc = format!("doc-{}", talk.pick(p.pool.max(1)));
                let mut text = talk.fresh(&f);
                text.push(' ');
                text.push_str(&talk.say(&f));
                json!({"id": id, "kind": "retrieval", "input": format!("policy for {}", f.order),
                    "documents": [{"id": doc, "text": text, "outdated": i % 12 == 3}]})
            }
            4 => {
                let key = format!("case/{}", f.order);
                let kind = if i % 12 == 4 {
                    "memory_write"
                } else {
                    "memory_read"
                };
                json!({"id": id, "kind": kind, "memory": {"key": key, "value": talk.say(&f)}})
            }
            _ => {
                let input = talk.say(&f);
                let out = format!(
                    "The refund of ${} for {} is due {}. {}",
                    f.amount,
                    f.order,
                    f.date,
                    talk.fresh(&f)
                );
                json!({"id": id, "kind": "llm", "input": input, "output": out})
            }
        };
        steps.push(step);
    }
    let tools: Vec<Value> = ["get_order", "issue_refund"]
        .iter()
        .map(|t| {
            json!({"name": t, "description": format!("{t} tool"), "mutates": t.starts_with("issue"),
                "parameters": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}})
        })
        .collect();
    json!({
        "format": "tdn.run/1",
        "id": format!("gen-vocab-{n}"),
        "status": "failed",
        "task": format!("Refund order {}", talk.order(0)),
        "final_answer": format!("Your refund of ${} for {} has been issued.", f.amount, f.order),
        "model": {"name": "gen", "context_window": 128_000},
        "tools": tools,
        "context_units": units,
        "steps": steps,
    })
}

/// An OTLP attribute.
fn attr(key: &str, value: Value) -> Value {
    match value {
        Value::Number(n) => json!({"key": key, "value": {"intValue": n.to_string()}}),
        v => json!({"key": key, "value": {"stringValue": v}}),
    }
}

fn text_message(role: &str, content: String) -> Value {
    json!({"role": role, "parts": [{"type": "text", "content": content}]})
}

const SYSTEM: &str = "You are the support agent of an online shop. Answer the customer's question about an order, a refund or a delivery; look the order up before you answer, never promise a refund the policy does not allow, and keep every answer short and polite.";

/// An OTLP JSON export of `n` spans (see the module docs): an agent span, then chat and
/// `execute_tool` spans in turn.
pub fn otlp_export(n: usize, p: &Vocab) -> Value {
    let mut talk = Talk::new(0x9e37_79b9_7f4a_7c15 ^ 0x5_deec_e66d, p);
    let trace = format!("{:032x}", 0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736u128);
    let root = format!("{:016x}", 1);
    let t0: u64 = 1_767_225_600_000_000_000;
    let ns = |i: usize| t0 + (i as u64) * 1_000_000;
    let mut spans = vec![
        json!({"traceId": trace, "spanId": root, "name": "invoke_agent support",
        "kind": 1, "startTimeUnixNano": t0.to_string(), "endTimeUnixNano": ns(n + 1).to_string(),
        "attributes": [attr("gen_ai.operation.name", json!("invoke_agent")),
                       attr("gen_ai.agent.name", json!("support"))],
        "status": {}}),
    ];
    let mut history: Vec<Value> = Vec::new();
    let mut f = talk.fact();
    let mut call = 0;
    let mut i = 1;
    while i < n {
        let start = ns(i);
        if history.is_empty() || talk.pick(3) == 0 {
            f = talk.fact();
            let said = talk.say(&f);
            history.push(text_message("user", said));
        }
        call += 1;
        let call_id = format!("call_{call}");
        let args = json!({"id": f.order, "date": f.date});
        let said = talk.say(&f);
        let out = json!([{"role": "assistant", "parts": [
            {"type": "text", "content": said},
            {"type": "tool_call", "id": call_id, "name": "get_order", "arguments": args}],
            "finish_reason": "tool_call"}]);
        let mut shown = vec![text_message("system", SYSTEM.to_owned())];
        shown.extend(
            history
                .iter()
                .skip(history.len().saturating_sub(3))
                .cloned(),
        );
        spans.push(json!({"traceId": trace, "spanId": format!("{:016x}", i + 1), "parentSpanId": root,
            "name": "chat gen-1", "kind": 3,
            "startTimeUnixNano": start.to_string(), "endTimeUnixNano": (start + 900_000).to_string(),
            "attributes": [attr("gen_ai.operation.name", json!("chat")),
                           attr("gen_ai.request.model", json!("gen-1")),
                           attr("gen_ai.input.messages", json!(Value::from(shown.clone()).to_string())),
                           attr("gen_ai.output.messages", json!(out.to_string())),
                           attr("gen_ai.usage.input_tokens", json!(300 + 40 * shown.len())),
                           attr("gen_ai.usage.output_tokens", json!(60))],
            "status": {}}));
        history.push(out[0].clone());
        i += 1;
        if i >= n {
            break;
        }
        let start = ns(i);
        let note = talk.fresh(&f);
        let result = json!({"id": f.order, "total": f.amount, "date": f.date, "note": note});
        spans.push(json!({"traceId": trace, "spanId": format!("{:016x}", i + 1), "parentSpanId": root,
            "name": "execute_tool get_order", "kind": 1,
            "startTimeUnixNano": start.to_string(), "endTimeUnixNano": (start + 400_000).to_string(),
            "attributes": [attr("gen_ai.operation.name", json!("execute_tool")),
                           attr("gen_ai.tool.name", json!("get_order")),
                           attr("gen_ai.tool.call.id", json!(call_id)),
                           attr("gen_ai.tool.call.arguments", json!(args.to_string())),
                           attr("gen_ai.tool.call.result", json!(result.to_string()))],
            "status": {}}));
        history.push(json!({"role": "tool", "parts": [
            {"type": "tool_call_response", "id": call_id, "response": result.to_string()}]}));
        i += 1;
    }
    json!({"resourceSpans": [{
        "resource": {"attributes": [attr("service.name", json!("support-agent"))]},
        "scopeSpans": [{"scope": {"name": "gen"}, "spans": spans}]}]})
}

/// The spans of [`otlp_export`] with their attributes as plain JSON (strings and integers).
fn otlp_spans(n: usize, p: &Vocab) -> Vec<Value> {
    let mut export = otlp_export(n, p);
    let spans = export["resourceSpans"][0]["scopeSpans"][0]["spans"].take();
    let Value::Array(spans) = spans else {
        return Vec::new();
    };
    spans
        .into_iter()
        .map(|mut s| {
            let mut attrs = serde_json::Map::new();
            if let Value::Array(list) = s["attributes"].take() {
                for kv in list {
                    let key = kv["key"].as_str().unwrap_or_default().to_owned();
                    let v = &kv["value"];
                    let value = match (v.get("stringValue"), v.get("intValue")) {
                        (Some(x), _) => x.clone(),
                        (None, Some(Value::String(i))) => json!(i.parse::<i64>().unwrap_or(0)),
                        _ => Value::Null,
                    };
                    attrs.insert(key, value);
                }
            }
            s["attributes"] = Value::Object(attrs);
            s
        })
        .collect()
}

fn nanos_of(v: &Value) -> u64 {
    v.as_str().and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// `YYYY-MM-DD`, `HH:MM:SS` and the nanoseconds of a time on 2026-01-01 (the generated spans'
/// day), from Unix nanoseconds.
fn clock(ns: u64) -> (String, String, u64) {
    let day = 1_767_225_600u64;
    let secs = (ns / 1_000_000_000).saturating_sub(day);
    let time = format!(
        "{:02}:{:02}:{:02}",
        secs / 3600 % 24,
        secs / 60 % 60,
        secs % 60
    );
    ("2026-01-01".to_owned(), time, ns % 1_000_000_000)
}

/// GenAI messages (`{role, parts}`) as OpenAI chat messages.
fn openai_messages(genai: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for m in genai.as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or("user");
        let mut text = Vec::new();
        let mut calls = Vec::new();
        for part in m["parts"].as_array().into_iter().flatten() {
            match part["type"].as_str() {
                Some("text") => text.push(part["content"].as_str().unwrap_or_default().to_owned()),
                Some("tool_call") => calls.push(json!({"id": part["id"], "type": "function",
                    "function": {"name": part["name"], "arguments": part["arguments"].to_string()}})),
                Some("tool_call_response") => out.push(json!({"role": "tool",
                    "tool_call_id": part["id"], "content": part["response"]})),
                _ => {}
            }
        }
        if role == "tool" {
            continue;
        }
        let mut msg = json!({"role": role, "content": text.join("\n")});
        if !calls.is_empty() {
            msg["tool_calls"] = Value::Array(calls);
        }
        out.push(msg);
    }
    out
}

/// The spans of [`otlp_export`] as a Langfuse trace (`GET /api/public/traces/{id}`): the agent
/// span an `AGENT` observation, each chat span a `GENERATION` whose input is the OpenAI-style
/// messages it was sent, each tool span a `TOOL` with its arguments and result as objects.
#[allow(dead_code)]
pub fn langfuse_export(n: usize, p: &Vocab) -> Value {
    let iso = |v: &Value| {
        let (date, time, ns) = clock(nanos_of(v));
        format!("{date}T{time}.{:06}Z", ns / 1000)
    };
    let spans = otlp_spans(n, p);
    let trace = spans
        .first()
        .and_then(|s| s["traceId"].as_str())
        .unwrap_or_default()
        .to_owned();
    let observations: Vec<Value> = spans
        .iter()
        .map(|s| {
            let a = &s["attributes"];
            let mut o = json!({"id": s["spanId"], "traceId": trace, "name": s["name"],
                "startTime": iso(&s["startTimeUnixNano"]), "endTime": iso(&s["endTimeUnixNano"]),
                "parentObservationId": s.get("parentSpanId").cloned().unwrap_or(Value::Null),
                "level": "DEFAULT", "input": null, "output": null});
            let parsed = |k: &str| {
                a[k].as_str()
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
                    .unwrap_or(Value::Null)
            };
            match a["gen_ai.operation.name"].as_str() {
                Some("chat") => {
                    o["type"] = json!("GENERATION");
                    o["model"] = a["gen_ai.request.model"].clone();
                    o["input"] = Value::Array(openai_messages(&parsed("gen_ai.input.messages")));
                    o["output"] = openai_messages(&parsed("gen_ai.output.messages"))
                        .into_iter()
                        .next()
                        .unwrap_or(Value::Null);
                    o["usageDetails"] = json!({"input": a["gen_ai.usage.input_tokens"],
                        "output": a["gen_ai.usage.output_tokens"]});
                }
                Some("execute_tool") => {
                    o["type"] = json!("TOOL");
                    o["name"] = a["gen_ai.tool.name"].clone();
                    o["input"] = parsed("gen_ai.tool.call.arguments");
                    o["output"] = parsed("gen_ai.tool.call.result");
                }
                _ => {
                    o["type"] = json!("AGENT");
                    o["name"] = a["gen_ai.agent.name"].clone();
                }
            }
            o
        })
        .collect();
    json!({"id": trace, "name": "support", "observations": observations})
}

/// The spans of [`otlp_export`] as span rows, as the collector's ClickHouse exporter stores them
/// and ClickHouse's JSON output gives them (`{"data": [...]}`): every attribute a string.
#[allow(dead_code)]
pub fn span_rows_export(n: usize, p: &Vocab) -> Value {
    let rows: Vec<Value> = otlp_spans(n, p)
        .into_iter()
        .map(|s| {
            let start = nanos_of(&s["startTimeUnixNano"]);
            let (date, time, ns) = clock(start);
            let attrs: serde_json::Map<String, Value> = s["attributes"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| {
                    let text = match v {
                        Value::String(t) => t.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), Value::String(text))
                })
                .collect();
            let kind = if s["kind"] == json!(3) {
                "SPAN_KIND_CLIENT"
            } else {
                "SPAN_KIND_INTERNAL"
            };
            json!({"Timestamp": format!("{date} {time}.{ns:09}"), "TraceId": s["traceId"],
                "SpanId": s["spanId"], "ParentSpanId": s.get("parentSpanId").cloned().unwrap_or(json!("")),
                "TraceState": "", "SpanName": s["name"], "SpanKind": kind,
                "ServiceName": "support-agent",
                "ResourceAttributes": {"service.name": "support-agent"},
                "ScopeName": "gen", "ScopeVersion": "", "SpanAttributes": attrs,
                "Duration": nanos_of(&s["endTimeUnixNano"]).saturating_sub(start),
                "StatusCode": "STATUS_CODE_UNSET", "StatusMessage": "",
                "Events.Timestamp": [], "Events.Name": [], "Events.Attributes": []})
        })
        .collect();
    json!({"data": rows})
}

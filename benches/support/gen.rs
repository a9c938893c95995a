//! Generated `tdn.run/1` files for the benchmarks (docs/performance.md), in two shapes:
//!
//! - `Repeating`: a few hundred orders, customers and amounts, reused across the run (values
//!   repeat, so the link index stays small);
//! - `Distinct`: every user message, tool result and document brings new order ids, addresses,
//!   amounts, dates and sentences, which later steps pick up from the last twenty (many distinct
//!   values flowing between steps, as a long production run has).
//!
//! A step cycle of user message, model call (with a thought, a tool call and the context it was
//! sent), tool call (a JSON result that becomes a context unit, a failure every 97 steps), search
//! (a document, some outdated), state-changing call, and model answer; about 470 bytes a step in
//! the distinct shape. Deterministic (a fixed-seed generator), no I/O.

use serde_json::{Value, json};

/// Which values a generated run reuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Values repeat.
    Repeating,
    /// Many distinct values flow between steps.
    Distinct,
}

impl Shape {
    /// Both shapes.
    pub const ALL: [Shape; 2] = [Shape::Repeating, Shape::Distinct];

    /// Its name in benchmark ids.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Repeating => "repeating",
            Shape::Distinct => "distinct",
        }
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
        Shape::Distinct => Vals {
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
        Shape::Distinct => (0..6 + rng.below(6)).map(|_| rng.word()).collect(),
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

/// A run of `n` steps in `shape`, as the JSON text of a `tdn.run/1` file.
pub fn run_json(shape: Shape, n: usize) -> String {
    run_value(shape, n).to_string()
}

/// A run of `n` steps in `shape`, as JSON.
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
            Shape::Repeating => recent[recent.len() - 1].clone(),
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
                    Shape::Repeating => format!("doc-{}", i % 50),
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

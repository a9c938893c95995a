//! Scoring speed of the influence ranking with the default (hashed) embedder: 1,000 evidence
//! pieces with 20 ancestors each, against one answer. Two shapes: every ancestor text distinct
//! (21,001 texts to embed, the worst case), and a run-like shape where ancestors are shared model
//! outputs (a sliding window over 1,000 reasoning steps). Run with
//! `cargo bench --bench influence`.

/// The binary's allocator (src/main.rs), so the figures are the program's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use tdn_tui::analysis::influence::{EvidenceItem, HashedEmbedder, ScoreRequest, score_influence};

const EVIDENCE: usize = 1_000;
const ANCESTORS: usize = 20;
const WORDS_PER_TEXT: usize = 40;

const VOCABULARY: &[&str] = &[
    "refund",
    "order",
    "customer",
    "window",
    "policy",
    "damaged",
    "denied",
    "approved",
    "return",
    "shipping",
    "invoice",
    "account",
    "balance",
    "payment",
    "credit",
    "score",
    "loan",
    "rate",
    "meeting",
    "calendar",
    "friday",
    "monday",
    "booking",
    "flight",
    "seat",
    "upgrade",
    "hotel",
    "night",
    "price",
    "discount",
    "coupon",
    "expired",
    "valid",
    "support",
    "ticket",
    "agent",
    "escalate",
    "manager",
    "review",
    "document",
    "contract",
    "clause",
    "signature",
    "deadline",
    "project",
    "budget",
    "report",
    "quarter",
    "revenue",
    "growth",
    "the",
    "and",
    "was",
    "because",
    "after",
    "before",
    "not",
    "never",
    "within",
    "days",
    "items",
    "tools",
    "analysis",
    "search",
];

/// A deterministic pseudo-random sentence (64-bit LCG; no dependency on a random crate).
fn sentence(seed: u64) -> String {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut words = Vec::with_capacity(WORDS_PER_TEXT);
    for _ in 0..WORDS_PER_TEXT {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let i = usize::try_from(x >> 33).unwrap_or(0) % VOCABULARY.len();
        words.push(VOCABULARY[i]);
    }
    words.join(" ")
}

fn bench(c: &mut Criterion) {
    let answer = sentence(u64::MAX);
    let evidence_texts: Vec<String> = (0..EVIDENCE as u64).map(sentence).collect();

    // Worst case: 20 distinct ancestors per piece.
    let distinct: Vec<Vec<String>> = (0..EVIDENCE as u64)
        .map(|i| {
            (0..ANCESTORS as u64)
                .map(|j| sentence(1_000_000 + i * 100 + j))
                .collect()
        })
        .collect();
    // Run-like: piece i is followed by reasoning steps i..i+20 of a shared list.
    let steps: Vec<String> = (0..(EVIDENCE + ANCESTORS) as u64)
        .map(|j| sentence(5_000_000 + j))
        .collect();

    let ids: Vec<String> = (0..EVIDENCE).map(|i| format!("e{i}")).collect();
    let items_distinct: Vec<EvidenceItem<'_>> = (0..EVIDENCE)
        .map(|i| EvidenceItem {
            id: &ids[i],
            text: &evidence_texts[i],
            ancestors: distinct[i].iter().map(String::as_str).collect(),
        })
        .collect();
    let items_shared: Vec<EvidenceItem<'_>> = (0..EVIDENCE)
        .map(|i| EvidenceItem {
            id: &ids[i],
            text: &evidence_texts[i],
            ancestors: steps[i..i + ANCESTORS].iter().map(String::as_str).collect(),
        })
        .collect();

    let mut group = c.benchmark_group("influence");
    group.sample_size(10);
    group.bench_function("hashed_1000x20_distinct_ancestors", |b| {
        b.iter(|| {
            let req = ScoreRequest::new(&answer, &items_distinct);
            black_box(score_influence(&req, &HashedEmbedder).map(|s| s.len()))
        })
    });
    group.bench_function("hashed_1000x20_shared_ancestors", |b| {
        b.iter(|| {
            let req = ScoreRequest::new(&answer, &items_shared);
            black_box(score_influence(&req, &HashedEmbedder).map(|s| s.len()))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

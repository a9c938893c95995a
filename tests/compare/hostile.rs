//! Mutated pairs: every real export against copies of itself with steps dropped, repeated,
//! swapped, emptied or filled with hostile text, a fixed spread of them (xorshift). The
//! comparison never panics, its rows hold every step of each run once and in order, and nothing
//! from the runs reaches the page raw.

use super::*;
use tdn_tui::analysis::compare::{compare, render_text};
use tdn_tui::analysis::load::{LoadOptions, load_path};
use tdn_tui::analysis::model::{Json, Run};

fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

const HOSTILE: &[&str] = &[
    "\u{1b}[2J\u{1b}]0;title\u{7}",
    "look\u{200b}up \u{202e}txet",
    "{\"a\": [1, {\"b\": \"\u{9b}31m\"}]}",
    "",
    "0123456789abcdef0123456789abcdef 2025-01-01T00:00:00Z",
];

fn mutate(run: &Run, seed: &mut u64) -> Run {
    let mut out = run.clone();
    for _ in 0..1 + next(seed) % 4 {
        let n = out.steps.len();
        if n == 0 {
            break;
        }
        let i = (next(seed) % n as u64) as usize;
        match next(seed) % 5 {
            0 => {
                out.steps.remove(i);
            }
            1 => {
                let mut copy = out.steps[i].clone();
                copy.id = format!("{}-again", copy.id).into();
                out.steps.insert(i, copy);
            }
            2 => out.steps.swap(i, (i + 1) % n),
            3 => {
                let text = HOSTILE[(next(seed) % HOSTILE.len() as u64) as usize];
                out.steps[i].output = Some(Json::from(text));
            }
            _ => {
                let s = &mut out.steps[i];
                s.output = None;
                s.input = None;
                s.tool = None;
                s.error = Some(HOSTILE[0].to_owned());
            }
        }
    }
    // Parents must name earlier steps once loaded; a mutated copy keeps only those that still do.
    let mut seen = std::collections::HashSet::new();
    for s in &mut out.steps {
        if s.parent
            .as_ref()
            .is_some_and(|p| !seen.contains(p.as_str()))
        {
            s.parent = None;
        }
        seen.insert(s.id.as_str().to_owned());
    }
    out.reindex();
    out
}

#[test]
fn mutated_pairs_of_every_real_export_compare_whole_and_print_inert() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut pairs = 0;
    for name in real_exports() {
        let runs: Vec<Run> = load_path(&real(&name), &LoadOptions::default())
            .unwrap()
            .into_iter()
            .map(|l| l.run)
            .collect();
        for run in runs.iter().take(3) {
            for _ in 0..4 {
                let bad = mutate(run, &mut seed);
                for (g, b) in [(run, &bad), (&bad, run)] {
                    let c = compare(g, b);
                    let good_order: Vec<usize> = c.rows.iter().filter_map(|r| r.good).collect();
                    let bad_order: Vec<usize> = c.rows.iter().filter_map(|r| r.bad).collect();
                    assert_eq!(good_order, (0..g.steps.len()).collect::<Vec<_>>(), "{name}");
                    assert_eq!(bad_order, (0..b.steps.len()).collect::<Vec<_>>(), "{name}");
                    let page = render_text(&c, g, b, "good", "bad");
                    assert!(
                        !page.chars().any(|ch| ch != '\n'
                            && (ch.is_control() || ch == '\u{202e}' || ch == '\u{200b}')),
                        "{name}: {page}"
                    );
                    let json = serde_json::to_string(&c.json(g, b)).unwrap();
                    let back: Value = serde_json::from_str(&json).unwrap();
                    assert_eq!(back["aligned"].as_array().unwrap().len(), c.rows.len());
                    pairs += 1;
                }
            }
        }
    }
    assert!(pairs >= 200, "{pairs}");
}

//! Issue 26, what was left: a model step read as a conversation (roles, calls inline with their
//! arguments and results, reasoning, long content folded), cost in dollars per step and for the
//! run (recorded, or an estimate marked as one), and steps named by their names rather than span
//! ids in the suspects' rows, the shortlist, the prove-it hints and the detail's title. On real
//! exports (tests/fixtures/import/real/); expected values come from the exports.

use super::fixture::{press, screen};
use super::readable::{open_file, real};
use std::sync::Arc;
use tdn_tui::experiments::engine::ScriptedPort;
use tdn_tui::tui::headless::Headless;
use tdn_tui::tui::panes::detail;
use tdn_tui::tui::theme::Theme;

/// The OpenAI Agents SDK in Langfuse: `response` calls `get_weather`, the tool answers, the
/// second `response` replies; Langfuse records each call's cost.
const AGENTS: &str = "langfuse/langfuse__openai-agents-2025-09-30.trace.json";
/// Koog in Langfuse: one `llm.chat` makes two calls at once (`HelloTool`, `ByeTool`), two tool
/// steps run them; recorded costs $0.0011775 and $0.00061.
const KOOG: &str = "langfuse/langfuse__koog-2025-08-26.trace.json";
/// An ATIF trajectory with reasoning, parallel calls and `total_cost_usd` 0.0074.
const ATIF: &str = "atif/Arize-ai__multi_tool_trajectory.json";
/// smolagents over OTLP: eight `ChatCompletion` spans with 16-hex ids, tokens and no cost.
const SMOL: &str = "otlp/evilmartians__smol_deep_research_agent.json";

fn open(name: &str, size: (u16, u16), keys: &str) -> Headless {
    let mut h = screen(
        open_file(&real(name)),
        size,
        Arc::new(ScriptedPort::new("./my-agent.sh")),
    );
    press(&mut h, keys);
    h
}

/// A run of at least 12 hex digits: what a span id looks like.
fn has_hex_id(text: &str) -> bool {
    let mut run = 0;
    for c in text.chars() {
        run = if c.is_ascii_hexdigit() { run + 1 } else { 0 };
        if run >= 12 {
            return true;
        }
    }
    false
}

#[test]
fn a_model_turns_zoomed_row_shows_the_calls_it_made_with_their_arguments() {
    let h = open(KOOG, (160, 30), "1 z");
    let s = h.screen();
    assert!(
        s.contains("llm.chat llm  calls HelloTool(name: Bob), ByeTool(name: Bob)"),
        "{s}"
    );
    let h = open(ATIF, (200, 30), "1 z");
    let s = h.screen();
    assert!(
        s.contains(
            "calls financial_search(ticker: AAPL, metric: quarterly_revenue, period: latest)"
        ),
        "{s}"
    );
    for h in [open(KOOG, (200, 30), "1 z"), open(ATIF, (200, 30), "1 z")] {
        let s = h.screen();
        assert!(!s.contains("tool_calls:") && !s.contains("items]"), "{s}");
    }
}

#[test]
fn the_detail_reads_a_model_step_as_a_conversation_with_calls_and_their_results() {
    // The second `response` (position 5) was sent the first turn's call and its result.
    let h = open(AGENTS, (120, 40), ": 5 Enter Enter");
    let s = h.screen();
    for want in [
        "── Conversation: 4 messages to gpt-4.1-2025-04-14",
        "#0 system",
        "#1 user",
        "#2 assistant",
        "↳ calls get_weather(city: Tokyo) → The weather in Tokyo is sunny. (#3)",
        "#3 tool · the result of get_weather (#2)",
        "── Reply",
        "The weather in Tokyo is currently sunny.",
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
    // The provider's call id is not what names the tool message.
    assert!(!s.contains("call_Kud0j0DxWSmLzv9W5m6qVqXn"), "{s}");
    // A reply's plural calls, each with the result the tool step that ran it gave.
    let h = open(KOOG, (120, 40), ": 5 Enter Enter");
    let s = h.screen();
    assert!(
        s.contains("↳ calls HelloTool(name: Bob) → Hello my darling Bob! (step 8)"),
        "{s}"
    );
    assert!(
        s.contains("↳ calls ByeTool(name: Bob) → Bye my dear Bob! (step 7)"),
        "{s}"
    );
}

#[test]
fn recorded_reasoning_shows_before_the_reply() {
    let h = open(ATIF, (120, 40), ": 2 Enter Enter");
    let s = h.screen();
    let reasoning = s
        .find("reasoning\n")
        .or_else(|| s.find("reasoning "))
        .unwrap_or(usize::MAX);
    let thought = s.find("The user wants two things").unwrap_or(0);
    let said = s.find("I'll pull the financial data").unwrap_or(0);
    assert!(reasoning < thought && thought < said, "{s}");
}

#[test]
fn long_messages_are_folded_in_the_pane_and_whole_in_the_full_view() {
    let doc = open_file(&real(SMOL));
    let theme = Theme::bare();
    let text = |full: bool| -> String {
        detail::build(&doc, 2, 100, full, &theme)
            .lines
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
                    + "\n"
            })
            .collect()
    };
    let (folded, full) = (text(false), text(true));
    assert!(folded.contains("more lines folded"), "{folded}");
    assert!(!full.contains("more lines folded"));
    assert!(full.lines().count() > folded.lines().count() + 100);
    // The system prompt's end is only in the full view.
    let end = "Now Begin!";
    assert!(full.contains(end) && !folded.contains(end));
    // The zoomed detail pane and the full step view lay it out in full; the pane folds.
    let h = open(SMOL, (120, 40), ": 3 Enter 3");
    assert!(!tdn_tui::tui::render::detail_full(&h.app));
    for keys in [": 3 Enter 3 z", ": 3 Enter Enter"] {
        let h = open(SMOL, (120, 40), keys);
        assert!(tdn_tui::tui::render::detail_full(&h.app), "{keys}");
    }
}

#[test]
fn recorded_dollars_show_per_step_in_the_rows_the_detail_and_the_header() {
    let h = open(KOOG, (160, 30), "1 z");
    let s = h.screen();
    // The run's total (0.0011775 + 0.00061) in the header, each call's cost in its row.
    assert!(
        s.lines().nth(1).is_some_and(|l| l.contains(" · $0.0018 ")),
        "{s}"
    );
    let row = s
        .lines()
        .find(|l| l.contains("calls HelloTool"))
        .unwrap_or("");
    assert!(
        row.trim_end_matches('┃').trim_end().ends_with("$0.0012"),
        "{row}"
    );
    assert!(s.contains("cost"), "the column has a header: {s}");
    let h = open(KOOG, (120, 40), ": 5 Enter Enter");
    assert!(h.screen().contains("$0.0012 as recorded"), "{}", h.screen());
    // ATIF's own total wins over the steps' sum.
    let h = open(ATIF, (120, 40), "");
    assert!(h.screen().contains(" · $0.0074 "), "{}", h.screen());
}

#[test]
fn an_estimate_is_marked_as_one_in_the_header_the_rows_and_the_waterfall() {
    // smolagents records tokens and the o1 model, no cost: every dollar is an estimate.
    // `~` marks an estimate; on a wide screen the word says so too.
    let h = open(SMOL, (160, 50), "");
    let head = h.screen().lines().nth(1).unwrap_or("").to_owned();
    assert!(head.contains(" · ~$0.7 · "), "{head}");
    let h = open(SMOL, (220, 50), "");
    let head = h.screen().lines().nth(1).unwrap_or("").to_owned();
    assert!(head.contains(" · ~$0.7 estimated · "), "{head}");
    let h = open(SMOL, (160, 50), "1 z");
    let row = h
        .screen()
        .lines()
        .find(|l| l.contains("calls web_search"))
        .unwrap_or("")
        .to_owned();
    assert!(row.contains("~$0.0"), "{row}");
    let h = open(SMOL, (160, 50), "1 w z");
    let s = h.screen();
    let bar = s.lines().find(|l| l.contains("█")).unwrap_or("");
    assert!(bar.contains("~$0."), "{s}");
    assert!(
        !s.lines().any(|l| l.contains('$') && !l.contains("~$")),
        "{s}"
    );
    let h = open(SMOL, (120, 40), ": 3 Enter Enter");
    assert!(
        h.screen().contains("~$0.084 estimated from tokens"),
        "{}",
        h.screen()
    );
}

#[test]
fn suspects_shortlist_hints_and_the_detail_title_name_steps_not_span_ids() {
    let h = open(SMOL, (160, 50), "");
    let s = h.screen();
    let right = |l: &str| l.chars().skip(72).collect::<String>();
    let row = s
        .lines()
        .map(right)
        .find(|l| l.contains("#1 ★"))
        .unwrap_or_default();
    assert!(row.contains("ChatComplet") && !has_hex_id(&row), "{row}");
    // The shortlist of a close call (an OpenAI Agents SDK export: two model calls of one model).
    let agents = open(
        "openai-agents/dazzaji__traces_2025-06-29_00-23-37.json",
        (160, 50),
        "",
    )
    .screen();
    let shortlist: String = agents
        .lines()
        .map(right)
        .skip_while(|l| !l.contains("shortlist"))
        .take(2)
        .collect();
    assert!(
        shortlist.contains("gpt-4o-2024-08-06 (4), gpt-4o-2024-08-06 (6)")
            && !has_hex_id(&shortlist),
        "{shortlist}"
    );
    // A prove-it hint names the step it replays from (here one of 38 steps; `ChatOpenAI` is
    // the name of two).
    let h = open("otlp/evilmartians__quo_tav_agent.json", (160, 50), "");
    let prove = h
        .screen()
        .lines()
        .find(|l| l.contains("Prove it"))
        .map(right)
        .unwrap_or_default();
    assert!(
        prove.contains("p replays from 'ChatOpenAI (24)'") && !has_hex_id(&prove),
        "{prove}"
    );
    // The detail's title names the step; its id is shown once, in the facts.
    let title = s.lines().find(|l| l.contains("Step detail")).unwrap_or("");
    assert!(
        title.contains("'ChatCompletion' (position 6)") && !has_hex_id(title),
        "{title}"
    );
    assert!(s.contains("id d372de39fd724172"), "{s}");
    // The influence list's step column.
    let h = open(AGENTS, (120, 40), "");
    let s = h.screen();
    let row = s
        .lines()
        .find(|l| l.contains("★ tool_result"))
        .unwrap_or("");
    assert!(row.contains("from get_weath") && !has_hex_id(row), "{row}");
}

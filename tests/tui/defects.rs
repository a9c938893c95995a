//! The screen's defects as a new user met them (on the sample runs and a large generated run),
//! each reproduced the way it was seen: keys pressed on a headless screen of the same size, then
//! the screen's text read. Expected values come from the run files and their reports.

use super::big_run::{big_report, big_run};
use super::fixture::{calendar, press, screen, screen_with, scripted};
use std::path::Path;
use std::sync::Arc;
use tdn_tui::analysis::influence::HashedEmbedder;
use tdn_tui::analysis::load::{LoadOptions, Warning, load_path};
use tdn_tui::analysis::report::{AnalyzeOptions, DroppedStep, analyze};
use tdn_tui::experiments::engine::{ExperimentPort, ScriptedPort, Unavailable};
use tdn_tui::tui::app::{App, AppOptions, Document, Pane};
use tdn_tui::tui::headless::Headless;
use tdn_tui::tui::keymap::Keymap;

/// A sample run, analysed with the rules as the screen does.
fn sample(name: &str) -> Document {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-runs")
        .join(format!("{name}.json"));
    let loaded = load_path(&path, &LoadOptions::default())
        .expect("the sample loads")
        .remove(0);
    let report = analyze(&loaded, &AnalyzeOptions::new(&HashedEmbedder));
    Document::new(loaded.run, report, Some(path))
}

fn none() -> Arc<dyn ExperimentPort> {
    Arc::new(Unavailable {
        reason: "no runner in this test".to_owned(),
    })
}

fn open(name: &str, size: (u16, u16), keys: &str) -> Headless {
    let mut h = screen(sample(name), size, none());
    press(&mut h, keys);
    h
}

/// The screen's rows.
fn rows(h: &Headless) -> Vec<String> {
    h.screen().lines().map(str::to_owned).collect()
}

#[test]
fn a_search_without_a_match_does_not_report_the_previous_count() {
    let h = open(
        "refund-outdated-policy",
        (140, 45),
        "/ l l m Enter / x y x y Enter",
    );
    let s = h.screen();
    // The first search's message ("2 steps match 'llm': ...") must not stand for the second.
    assert!(
        !s.contains("match 'llm'"),
        "the count of 'llm' is shown:\n{s}"
    );
    assert!(s.contains("no step matches 'xyxy'"), "{s}");
}

#[test]
fn a_run_with_nothing_to_blame_names_no_winner() {
    for name in [
        "order-status-succeeded",
        "cancel-waiting-for-user",
        "flight-change-declined",
    ] {
        let h = open(name, (120, 40), "");
        let doc = h.app.doc.as_ref().unwrap();
        assert!(doc.report.suspects.is_empty(), "{name} has no suspect");
        let s = h.screen();
        assert!(!s.contains("Clear winner"), "{name}:\n{s}");
        assert!(!s.contains("Only one suspect"), "{name}:\n{s}");
        assert!(s.contains("Nothing to blame"), "{name}:\n{s}");
    }
}

#[test]
fn at_100_columns_the_suspect_row_keeps_its_score() {
    let h = open("refund-outdated-policy", (100, 30), "");
    let top = &h.app.doc.as_ref().unwrap().report.suspects[0];
    let score = format!("{:.2}", top.score);
    let row = rows(&h)
        .into_iter()
        .find(|r| r.contains("#1 ★ s3"))
        .expect("the top suspect's row");
    assert!(row.contains(&score), "no score {score} in: {row}");
}

#[test]
fn the_claims_pane_says_what_each_label_rests_on_and_offers_only_real_jumps() {
    let h = open("calendar-friday", (220, 50), "5");
    let claim = &h.app.doc.as_ref().unwrap().report.claims[0];
    let start: String = claim.why.chars().take(40).collect();
    assert!(!start.is_empty());
    let s = h.screen();
    assert!(
        s.contains(&start),
        "the reason '{start}' is not shown:\n{s}"
    );
    // A claim without an evidence step does not offer the key that jumps to it.
    let h = open("track-package-wrong-tool", (160, 50), "5");
    let claims = &h.app.doc.as_ref().unwrap().report.claims;
    let i = claims
        .iter()
        .position(|c| c.evidence_step.is_none())
        .expect("a claim without evidence");
    let mut h = h;
    press(&mut h, &vec!["j"; i].join(" "));
    let s = h.screen();
    assert!(s.contains("evidence: none"), "{s}");
    assert!(!s.contains("evidence: none ["), "{s}");
}

#[test]
fn with_dropped_context_the_first_screen_proposes_restoring_it() {
    let h = open("office-hours-flat-context", (120, 40), "");
    let dropped = &h
        .app
        .doc
        .as_ref()
        .unwrap()
        .report
        .dropped
        .as_ref()
        .unwrap()
        .dropped;
    let unit = &dropped[0].id;
    let s = h.screen();
    assert!(
        s.contains(&format!("Prove it: r shows '{unit}' (never sent)")) && s.contains("r again"),
        "the first screen does not propose restoring '{unit}':\n{s}"
    );
    // As it says: the first r shows the unit, the second asks to run the restoration.
    let mut h = screen(sample("office-hours-flat-context"), (120, 40), scripted());
    press(&mut h, "r");
    assert_eq!(h.app.focus, Pane::Dropped);
    press(&mut h, "r");
    assert!(h.screen().contains("Run your agent?"), "{}", h.screen());
    assert!(
        h.screen().contains(&format!("restore unit '{unit}'")),
        "{}",
        h.screen()
    );
}

#[test]
fn enter_on_a_suspect_shows_its_step_in_full_and_esc_comes_back() {
    let mut h = open("refund-outdated-policy", (120, 40), "");
    assert_eq!(h.app.focus, Pane::Suspects);
    press(&mut h, "Enter");
    let s = h.screen();
    assert!(
        s.contains("closes"),
        "no full-screen step after one Enter:\n{s}"
    );
    assert!(s.contains("policy-2019"), "{s}");
    press(&mut h, "Esc");
    assert_eq!(h.app.focus, Pane::Suspects, "Esc goes back to the suspects");
    assert!(!h.screen().contains("closes"));
}

#[test]
fn a_message_leaves_the_key_hints_in_sight() {
    let mut h = open("refund-outdated-policy", (120, 40), "");
    press(&mut h, "] ]");
    let rows = rows(&h);
    let s = rows.join("\n");
    assert!(s.contains("that is the last suspect"), "{s}");
    assert!(
        rows.last().is_some_and(|r| r.contains("? help")),
        "the hints are hidden by the message:\n{s}"
    );
}

#[test]
fn pane_tabs_keep_their_order_and_focus_shows_without_colour() {
    let mut h = screen_with(calendar(), (120, 40), scripted(), "mono");
    for keys in ["2", "5", "4"] {
        press(&mut h, keys);
        let rows = rows(&h);
        let title = &rows[1];
        // The pane numbers of the secondary pane's title, before its own text.
        let secondary = &title[title.rfind(['┌', '┏']).unwrap_or(0)..];
        let tabs: Vec<&str> = secondary
            .split('·')
            .next()
            .unwrap_or("")
            .split(['[', ']', ' ', '┃', '┏', '━', '┓', '│', '┌', '─', '┐'])
            .filter(|t| t.len() == 1 && t.chars().all(|c| c.is_ascii_digit()))
            .collect();
        assert_eq!(
            tabs.iter()
                .filter(|t| **t != "1" && **t != "3")
                .copied()
                .collect::<Vec<_>>(),
            ["2", "4", "5", "6"],
            "the tabs moved after '{keys}': {title}"
        );
    }
    // The focused pane's frame differs from the others' in its characters, not only colour.
    let s = h.screen();
    let thick = s.matches('┏').count();
    assert_eq!(thick, 1, "one focused frame:\n{s}");
    assert!(s.contains('┌'));
}

#[test]
fn a_structured_step_row_shows_its_values_and_only_models_have_a_window() {
    let h = open("invoice-page-injection", (240, 40), "1");
    let doc = h.app.doc.as_ref().unwrap();
    let s5 = doc.run.step("s5").unwrap();
    let to = s5.tool.as_ref().unwrap().arguments["to"]
        .as_str()
        .unwrap()
        .to_owned();
    let row = rows(&h)
        .into_iter()
        .find(|r| r.contains("send_email tool s5"))
        .expect("the send_email row");
    assert!(row.contains(&to), "no recipient in: {row}");
    // The refund run records a model context window: its search step has none.
    let h = open("refund-outdated-policy", (120, 40), "");
    assert_eq!(
        h.app.selected_step(),
        Some(2),
        "the top suspect, a retrieval"
    );
    assert!(!h.screen().contains("window 32k"), "{}", h.screen());
}

#[test]
fn the_reference_answer_is_on_screen() {
    let h = open("refund-outdated-policy", (120, 40), "5");
    let reference = h
        .app
        .doc
        .as_ref()
        .unwrap()
        .run
        .reference_answer
        .clone()
        .expect("the sample records one");
    assert!(h.screen().contains(&reference), "{}", h.screen());
}

#[test]
fn glyphs_have_one_meaning_and_hints_are_words() {
    let h = screen(calendar(), (120, 40), scripted());
    let s = h.screen();
    // The failed step is marked ✗ in the timeline; the contradicted claim is not.
    assert!(s.contains("✗#2"), "{s}");
    let mut h = h;
    press(&mut h, "5");
    let claim_row = rows(&h)
        .into_iter()
        .find(|r| r.contains("contradicted"))
        .expect("the contradicted claim");
    assert!(!claim_row.contains("✗ contradicted"), "{claim_row}");
    for keys in ["", "1", "2", "3", "4", "5", "6"] {
        let mut h = screen(calendar(), (200, 40), scripted());
        press(&mut h, keys);
        let last = rows(&h).pop().unwrap_or_default();
        for name in [
            "toggle-influence",
            "ablate-shortlist",
            "focus-next",
            "jump-to-step",
        ] {
            assert!(!last.contains(name), "an action id in the hints: {last}");
        }
    }
}

#[test]
fn every_keymap_problem_is_reported() {
    let mut km = Keymap::defaults();
    let problems = km.merge_toml(
        "[global]\nfly = \"f\"\nquit = \"Hyper-q\"\n[nowhere]\nx = \"y\"\n",
        "keymap.toml",
    );
    assert_eq!(problems.len(), 3);
    let opts = AppOptions {
        keymap: km,
        messages: problems.clone(),
        size: (120, 40),
        ..AppOptions::default()
    };
    let mut h = super::fixture::headless(App::new(calendar(), opts), none());
    let s = h.screen();
    assert!(s.contains("2 more problems"), "{s}");
    press(&mut h, "W");
    let s = h.screen();
    for p in &problems {
        let start: String = p.chars().take(40).collect();
        assert!(s.contains(&start), "'{start}' is not listed:\n{s}");
    }
}

#[test]
fn without_a_terminal_a_bad_file_says_what_is_wrong_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{ not json").unwrap();
    for (file, says) in [
        (dir.path().join("missing.json"), "missing.json"),
        (broken, "broken.json"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tdn-tui"))
            .arg(&file)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{err}");
        assert!(!err.contains("needs a terminal"), "{err}");
    }
}

/// A large generated run: `n` steps, a shortlist of every failed step, the run's warning.
fn big_doc(n: usize, shortlist_all: bool) -> Document {
    let mut run = big_run(n);
    run.reindex();
    let mut report = big_report(&run);
    if shortlist_all {
        report.confidence.shortlist = report.suspects.iter().map(|s| s.step.clone()).collect();
    }
    report.run.warnings.push(Warning::run(
        None,
        "1203 suspects found; only the first 1000 are listed".to_owned(),
    ));
    Document::new(run, report, None)
}

#[test]
fn a_long_shortlist_is_summarised_and_ranked_rows_stay_in_sight() {
    let doc = big_doc(20_000, true);
    let n = doc.report.confidence.shortlist.len();
    assert!(n > 100, "{n}");
    let mut h = screen(doc, (120, 40), none());
    let s = h.screen();
    let second = &h.app.doc.as_ref().unwrap().report.suspects[1].step;
    // The rank column is as wide as the largest rank listed.
    assert!(
        s.lines()
            .any(|l| l.contains("#2 ") && l.contains(&format!("★ {second}"))),
        "no ranked row after the top:\n{s}"
    );
    assert!(s.contains("within the band; the first"), "{s}");
    press(&mut h, "i");
    assert!(h.screen().contains("u0"), "{}", h.screen());
}

#[test]
fn the_confirm_box_fits_the_screen_with_its_call_count_and_keys() {
    // Every shortlisted step produced a unit, so the whole shortlist can be ablated (the engine
    // plans at most max_suspects of them and says how many it left out).
    let doc = || {
        let d = big_doc(20_000, true);
        let mut run = d.run.as_ref().clone();
        for s in &d.report.confidence.shortlist {
            run.context_units
                .push(tdn_tui::analysis::model::ContextUnit {
                    id: format!("from-{s}").into(),
                    kind: "document".to_owned(),
                    text: s.clone(),
                    produced_by: Some(s.as_str().into()),
                    ..Default::default()
                });
        }
        run.reindex();
        Document::new(run, d.report.as_ref().clone(), None)
    };
    let targets = doc().report.confidence.shortlist.len();
    for size in [(80, 24), (120, 40)] {
        let mut h = screen(doc(), size, Arc::new(ScriptedPort::new("./agent.sh")));
        // What the suspects pane says A does agrees with the cap too.
        let before = h.screen();
        let all = format!("each of the {} shortlisted", group(targets));
        assert!(!before.contains(&all), "{size:?}: {before}");
        if size.0 >= 120 {
            assert!(before.contains("first 5 of the"), "{size:?}: {before}");
            let of = format!("{} shortlisted", group(targets));
            assert!(before.contains(&of), "{size:?}: {before}");
        }
        press(&mut h, "A");
        let s = h.screen();
        assert!(
            s.contains("runner calls"),
            "no call count at {size:?}:\n{s}"
        );
        assert!(
            s.contains("y/Enter run it"),
            "no yes/no line at {size:?}:\n{s}"
        );
        // The first line agrees with the plan: the scripted engine's cap is 5.
        let first = format!("ablate 5 of {} suspects, one at a time", group(targets));
        assert!(s.contains(&first), "{s}");
        assert!(!s.contains(&format!("ablate {targets} suspects")), "{s}");
    }
}

#[test]
fn the_run_warnings_are_reachable_from_the_screen() {
    let mut h = screen(big_doc(2_000, false), (120, 40), none());
    let s = h.screen();
    assert!(s.contains("1 warning"), "{s}");
    press(&mut h, "W");
    assert!(
        h.screen()
            .contains("1203 suspects found; only the first 1000 are listed"),
        "{}",
        h.screen()
    );
}

#[test]
fn the_dropped_title_and_first_line_agree_with_the_rows() {
    // Every unit reached the model at some step, yet steps left out units they had.
    let run = big_run(2_000);
    let mut report = big_report(&run);
    let d = report.dropped.as_mut().unwrap();
    d.dropped.clear();
    d.any_dropped = false;
    d.sent_count = d.available_count;
    d.reason = "nothing was dropped".to_owned();
    let per_step: usize = d.steps.iter().map(|s: &DroppedStep| s.dropped.len()).sum();
    assert!(per_step > 100);
    let mut h = screen(Document::new(run, report, None), (120, 40), none());
    press(&mut h, "4");
    let s = h.screen();
    assert!(!s.contains("0 dropped"), "{s}");
    assert!(!s.contains("nothing was dropped"), "{s}");
    assert!(s.contains(&format!("{} left out", group(per_step))), "{s}");
    assert!(s.contains("- u3"), "{s}");
}

/// `n` with its thousands separated by commas.
fn group(n: usize) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn grouped_suspects_say_how_many_steps_they_stand_for() {
    use tdn_tui::analysis::report::SimilarStep;
    let doc = calendar();
    let mut report = doc.report.as_ref().clone();
    let listed = report.suspects.len();
    assert!(listed >= 2);
    report.suspects[1].similar = (0..3)
        .map(|k| SimilarStep {
            rank: listed + 1 + k,
            step: format!("s{}", 5 + k),
            index: 4 + k,
            score: 0.1,
        })
        .collect();
    // A rank of three digits after grouping: the rows stay aligned under the header.
    let last = listed - 1;
    report.suspects[last].rank = 716;
    let steps: Vec<String> = report.suspects.iter().map(|x| x.step.clone()).collect();
    let mut h = screen(
        Document::new(doc.run.as_ref().clone(), report, None),
        (220, 40),
        none(),
    );
    let s = h.screen();
    let title = format!("{} ranked, like ones grouped into {listed}", listed + 3);
    assert!(s.contains(&title), "{s}");
    // Columns inside the suspects pane (between its thick borders).
    let column = |line: &str, what: &str| {
        let pane = line.split('┃').nth(1)?;
        let at = pane.find(what)?;
        Some(pane[..at].chars().count())
    };
    let header = s
        .lines()
        .find(|l| l.contains("category") && l.contains("score"))
        .and_then(|l| column(l, "step"))
        .expect("the column headers");
    for step in &steps {
        let row = s
            .lines()
            .find_map(|l| {
                column(l, "#")?;
                column(l, &format!(" {step} "))
            })
            .unwrap_or_else(|| panic!("no row for {step}:\n{s}"));
        assert_eq!(row + 1, header, "{step}: aligned under 'step'\n{s}");
    }
    assert!(s.contains("#716"), "{s}");
    press(&mut h, "]");
    let s = h.screen();
    let said = format!(
        "and 3 similar steps with the same finding, ranked #{} to #{}: 's5', 's6', 's7'",
        listed + 1,
        listed + 3
    );
    assert!(s.contains(&said), "{s}");
}

#[test]
fn the_influence_shortlist_is_looked_up_by_position() {
    let doc = calendar();
    let inf = doc
        .report
        .influence
        .as_ref()
        .expect("the fixture ranks context");
    assert!(!inf.confidence.shortlist.is_empty());
    let ids: Vec<&str> = doc
        .influence_shortlist
        .iter()
        .map(|&i| &*inf.scores[i].id)
        .collect();
    let want: Vec<&str> = inf
        .confidence
        .shortlist
        .iter()
        .map(String::as_str)
        .filter(|id| inf.scores.iter().any(|e| &*e.id == *id))
        .collect();
    assert_eq!(ids, want);
    for (i, e) in inf.scores.iter().enumerate() {
        assert_eq!(
            doc.influence_shortlisted[i],
            inf.confidence.shortlist.iter().any(|s| **s == *e.id),
            "{}",
            e.id
        );
    }
}

#[test]
fn a_timeline_column_no_step_fills_has_no_header() {
    let doc = calendar();
    let mut run = doc.run.as_ref().clone();
    for s in &mut run.steps {
        s.extras_mut().started_at = None;
        s.extras_mut().ended_at = None;
    }
    assert!(run.steps.iter().any(|s| s.usage().is_some()), "tokens stay");
    let mut h = screen(
        Document::new(run, doc.report.as_ref().clone(), None),
        (140, 40),
        none(),
    );
    let (header, s) = timeline_header(&mut h);
    assert!(header.contains("tokens"), "{s}");
    assert!(!header.contains("time"), "no step has a duration:\n{s}");
    // With durations, both headers.
    let mut h = screen(calendar(), (140, 40), none());
    let (header, s) = timeline_header(&mut h);
    assert!(header.contains("time") && header.contains("tokens"), "{s}");
}

/// The timeline's column header line (after `1`), and the whole screen for messages.
fn timeline_header(h: &mut Headless) -> (String, String) {
    press(h, "1");
    let s = h.screen();
    let header = s
        .lines()
        .find(|l| l.contains("name @agent kind"))
        .unwrap_or_default()
        .to_owned();
    (header, s)
}

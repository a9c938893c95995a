//! What users of other terminal tools expect, tried through keys on a headless screen: the
//! timeline's filter, content search, sorting, headers and row count, go-to-step, the waterfall,
//! zooming, mouse clicks on rows, the help's search, sharing the diagnosis, the warnings list,
//! reloading a changed run and the pager outside a terminal. Expected values are read from the
//! fixtures (tests/fixtures/tui/): the calendar run holds nine steps, s2 (an agent) holds s3-s7,
//! s4 failed.

use super::fixture::{
    app_status, calendar, headless, press, refund_scored, screen, scripted, status,
};
use std::sync::Arc;
use tdn_tui::analysis::load::Warning;
use tdn_tui::experiments::engine::Unavailable;
use tdn_tui::tui::action::Action;
use tdn_tui::tui::app::{App, AppOptions, Document, Overlay, Pane};
use tdn_tui::tui::headless::Headless;

fn none() -> Arc<Unavailable> {
    Arc::new(Unavailable {
        reason: "no runner in this test".to_owned(),
    })
}

fn ids(h: &Headless) -> Vec<String> {
    let doc = h.app.doc.as_ref().unwrap();
    h.app
        .timeline
        .visible
        .iter()
        .map(|&i| doc.run.steps[i].id.to_string())
        .collect()
}

fn selected_id(h: &Headless) -> String {
    let doc = h.app.doc.as_ref().unwrap();
    doc.run.steps[h.app.selected_step().unwrap()].id.to_string()
}

#[test]
fn the_timeline_filters_by_failure_suspicion_kind_agent_and_text() {
    let mut h = screen(calendar(), (120, 40), scripted());
    press(&mut h, "f i s : f a i l e d Enter");
    assert_eq!(ids(&h), ["s4"]);
    assert_eq!(h.app.focus, Pane::Timeline);
    assert!(h.screen().contains("filter 'is:failed'"), "{}", h.screen());
    press(&mut h, "Esc");
    assert_eq!(ids(&h).len(), 9, "Esc takes the filter away");
    press(&mut h, "f k i n d : l l m Enter");
    assert_eq!(ids(&h), ["s3", "s6", "s9"]);
    press(&mut h, "f");
    // Editing the filter starts from the one in force; Backspace edits it.
    for _ in 0.."kind:llm".len() {
        press(&mut h, "Backspace");
    }
    press(&mut h, "a g e n t : w r i t e r Enter");
    assert_eq!(ids(&h), ["s9"]);
    press(&mut h, "f");
    for _ in 0.."agent:writer".len() {
        press(&mut h, "Backspace");
    }
    press(
        &mut h,
        "i s : s u s p e c t Space - k i n d : t o o l Enter",
    );
    let doc = h.app.doc.as_ref().unwrap();
    let expected: Vec<String> = doc
        .report
        .suspects
        .iter()
        .filter_map(|s| doc.run.step(&s.step))
        .filter(|s| s.kind_label() != "tool")
        .map(|s| s.id.to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut got = ids(&h);
    got.sort();
    assert_eq!(got, expected);
    // A filter that is not understood says so and changes nothing once accepted.
    press(&mut h, "Esc f i s : n o p e Enter");
    assert_eq!(ids(&h).len(), 9);
    let status = status(&h);
    assert!(status.contains("is:failed"), "{status}");
}

#[test]
fn search_finds_what_the_steps_say_not_only_their_names() {
    let mut h = screen(refund_scored(1.0), (120, 40), none());
    // Every step of the refund run mentions a refund: the question, the search's query and
    // document, the answer.
    press(&mut h, "/ r e f u n d Enter");
    assert_eq!(h.app.search.hits.steps, vec![0, 1, 2, 3]);
    // '120' is in the outdated document (s3) and the answer (s4).
    press(&mut h, "/ 1 2 0 Enter");
    assert_eq!(h.app.search.hits.steps, vec![2, 3]);
    let s = h.screen();
    assert!(s.contains("2 steps match '120'"), "{s}");
}

#[test]
fn the_timeline_sorts_by_duration_and_tokens_with_headers_and_a_row_count() {
    let mut h = screen(calendar(), (120, 40), scripted());
    press(&mut h, "1");
    let s = h.screen();
    assert!(s.contains("name @agent kind"), "{s}");
    assert!(s.contains("time   tokens"), "{s}");
    // The run opens on its top suspect, s3.
    assert!(s.contains("row 3 of 9"), "{s}");
    press(&mut h, "s");
    let doc = h.app.doc.as_ref().unwrap().clone();
    let durations: Vec<Option<i64>> = h
        .app
        .timeline
        .visible
        .iter()
        .map(|&i| doc.run.steps[i].duration_ms())
        .collect();
    assert_eq!(durations.len(), 9);
    // s2, the agent holding s3-s7, ran 4.2 s: the longest.
    assert_eq!(ids(&h)[0], "s2");
    assert!(
        durations.windows(2).all(|w| w[0] >= w[1]),
        "not longest first: {durations:?}"
    );
    press(&mut h, "s");
    // s9 used 1890 + 24 tokens, the most.
    assert_eq!(ids(&h)[..3], ["s9", "s6", "s3"]);
    press(&mut h, "s");
    assert_eq!(ids(&h).len(), 9);
    assert_eq!(ids(&h)[0], "s1", "back in run order");
}

#[test]
fn go_to_takes_a_position_or_an_id() {
    let mut h = screen(calendar(), (120, 40), scripted());
    press(&mut h, ": 7 Enter");
    assert_eq!(selected_id(&h), "s7");
    press(&mut h, ": s 2 Enter");
    assert_eq!(selected_id(&h), "s2");
    press(&mut h, ": 4 2 Enter");
    assert_eq!(selected_id(&h), "s2", "nothing moves");
    let status = status(&h);
    assert!(status.contains("from 1 to 9"), "{status}");
}

#[test]
fn the_waterfall_draws_steps_on_the_clock_with_containers_folded_and_unfolded() {
    let mut h = screen(calendar(), (120, 40), scripted());
    press(&mut h, "w");
    assert!(h.app.timeline.waterfall);
    assert_eq!(h.app.focus, Pane::Timeline);
    let s = h.screen();
    // The run went from s1's start to s9's end: 5.2 s.
    assert!(s.contains("0s") && s.contains("5.2s"), "{s}");
    // The timeline is the left part of the screen; rows lead with the step's name (s2 is
    // "plan the booking", s3 "choose tool").
    let row = |h: &Headless, name: &str| {
        h.screen()
            .lines()
            .map(|l| l.chars().take(54).collect::<String>())
            .find(|l| l.contains(&format!(" {name}")))
            .unwrap_or_default()
    };
    assert!(row(&h, "choose").contains('█'), "{}", row(&h, "choose"));
    assert!(
        row(&h, "plan the").contains('├'),
        "an unfolded container is a bracket"
    );
    press(&mut h, ": s 2 Enter Space");
    assert!(
        row(&h, "plan the").contains('▓'),
        "a folded one is one bar for all"
    );
    assert!(row(&h, "choose").is_empty(), "its nested steps are hidden");
    press(&mut h, "w");
    assert!(!h.screen().contains('▓'));
}

#[test]
fn any_pane_zooms_to_the_whole_screen_and_back() {
    let mut h = screen(calendar(), (120, 40), scripted());
    press(&mut h, "5 z");
    let s = h.screen();
    assert!(!s.contains("1 Timeline"), "{s}");
    assert!(s.contains("5 Claims"), "{s}");
    press(&mut h, "Tab");
    assert!(h.screen().contains("6 Experiments"));
    press(&mut h, "z");
    assert!(h.screen().contains("1 Timeline"));
    press(&mut h, "z Esc");
    assert!(!h.app.zoom, "Esc comes back too");
}

#[test]
fn a_click_selects_the_row_under_it() {
    let mut h = screen(calendar(), (120, 40), scripted());
    press(&mut h, "M");
    let s = h.screen();
    let (y, line) = s
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("retry @planner llm s6"))
        .expect("s6 is on screen");
    let x = line.find("retry @planner llm s6").unwrap();
    h.act(Action::Click(x as u16, y as u16));
    assert_eq!(h.app.focus, Pane::Timeline);
    assert_eq!(selected_id(&h), "s6");
    // A suspect row too.
    let s = h.screen();
    // The suspects pane is the right part of the screen (the timeline marks s4 '#2' too).
    let right = |l: &str| l.chars().skip(54).collect::<String>();
    let (y, _) = s
        .lines()
        .enumerate()
        .find(|(_, l)| right(l).contains("#2 ") && right(l).contains(" s4 "))
        .unwrap_or_else(|| panic!("the second suspect's row:\n{s}"));
    h.act(Action::Click(100, y as u16));
    assert_eq!(h.app.focus, Pane::Suspects);
    assert_eq!(h.app.suspects.cursor, 1);
    assert_eq!(selected_id(&h), "s4");
}

#[test]
fn the_help_can_be_searched() {
    let mut h = screen(calendar(), (120, 40), scripted());
    press(&mut h, "? / w a t e r f a l l");
    let s = h.screen();
    assert!(s.contains("lines holding 'waterfall'"), "{s}");
    assert!(s.contains("show the steps as bars"), "{s}");
    assert!(!s.contains("copy the step's output"), "{s}");
    press(&mut h, "Enter Esc");
    assert!(h.app.overlay.is_none());
}

#[test]
fn the_diagnosis_is_written_as_markdown_to_share() {
    let dir = tempfile::tempdir().unwrap();
    let opts = AppOptions {
        size: (120, 40),
        share_dir: Some(dir.path().to_path_buf()),
        ..AppOptions::default()
    };
    let mut h = headless(App::new(calendar(), opts), scripted());
    press(&mut h, "a y S");
    // Named after the run's file (calendar.run.json) and its id.
    let path = dir.path().join("tdn-diagnosis-calendar_run-cal-0007.md");
    let text = std::fs::read_to_string(&path).expect("the file was written");
    assert!(
        text.starts_with("# Diagnosis of run cal-0007: failed"),
        "{text}"
    );
    let doc = h.app.doc.as_ref().unwrap();
    let top = &doc.report.suspects[0].step;
    assert!(text.contains(&format!("step '{top}'")), "{text}");
    // The confirmed ablation of s3 (scripted) is in it.
    assert!(text.contains("CAUSAL"), "{text}");
    let status = status(&h);
    assert!(
        status.contains("tdn-diagnosis-calendar_run-cal-0007.md"),
        "{status}"
    );
}

#[test]
fn a_warning_shows_the_step_it_is_about() {
    let doc = calendar();
    let mut report = doc.report.as_ref().clone();
    report.run.warnings = vec![Warning {
        message: "step 's7' has an unknown field 'colour'".to_owned(),
        step: Some("s7".to_owned()),
        index: Some(6),
        field: Some("colour".to_owned()),
        file: false,
        cut: None,
    }];
    let doc = Document::new(doc.run.as_ref().clone(), report, None);
    let mut h = screen(doc, (120, 40), scripted());
    assert!(h.screen().contains("1 warning (W)"), "{}", h.screen());
    press(&mut h, "W");
    assert!(matches!(h.app.overlay, Some(Overlay::Warnings { .. })));
    assert!(h.screen().contains("unknown field 'colour'"));
    press(&mut h, "Enter");
    assert!(h.app.overlay.is_none());
    assert_eq!(selected_id(&h), "s7");
}

#[test]
fn a_run_read_again_keeps_the_selected_step_and_the_view() {
    let mut h = screen(calendar(), (120, 40), scripted());
    press(&mut h, "] : s 6 Enter s");
    assert_eq!(h.app.suspects.cursor, 1);
    // The file grew by a step.
    let old = h.app.doc.as_ref().unwrap().clone();
    let mut run = old.run.as_ref().clone();
    let mut extra = run.steps[8].clone();
    extra.id = "s10".into();
    run.steps.push(extra);
    run.reindex();
    let grown = Arc::new(Document::new(run, old.report.as_ref().clone(), None));
    h.act(Action::Reloaded(0, grown));
    assert_eq!(h.app.doc.as_ref().unwrap().run.steps.len(), 10);
    assert_eq!(selected_id(&h), "s6");
    assert_eq!(
        h.app.suspects.cursor, 1,
        "the second suspect stays selected"
    );
    assert_ne!(
        h.app.timeline.sort,
        tdn_tui::tui::panes::timeline::SortKey::Position
    );
    let said = status(&h);
    assert!(said.contains("10 steps (was 9)"), "{said}");
    // Without a terminal, neither a reload nor a pager can run; each says so.
    press(&mut h, "C-r");
    let said = status(&h);
    assert!(said.contains("live screen"), "{said}");
    press(&mut h, "O");
    let said = status(&h);
    assert!(said.contains("needs a terminal"), "{said}");
}

#[test]
fn the_pager_and_editor_are_the_ones_the_settings_resolved() {
    use tdn_tui::config::{ViewerCommand, Viewers};
    use tdn_tui::tui::effects::{Effect, External};
    let viewers = Viewers {
        pager: ViewerCommand {
            text: "most -s".to_owned(),
            from: "$PAGER",
            variable: "$PAGER",
        },
        ..Viewers::default()
    };
    let opts = AppOptions {
        viewers,
        ..AppOptions::default()
    };
    let mut app = App::new(calendar(), opts);
    app.headless = false;
    let command = |fx: &[Effect]| {
        fx.iter().find_map(|e| match e {
            Effect::External {
                program, command, ..
            } => Some((*program, command.text.clone())),
            _ => None,
        })
    };
    let fx = tdn_tui::tui::update::update(&mut app, Action::OpenPager);
    assert_eq!(command(&fx), Some((External::Pager, "most -s".to_owned())));
    let fx = tdn_tui::tui::update::update(&mut app, Action::OpenEditor);
    assert_eq!(
        command(&fx),
        Some((External::Editor, "vi".to_owned())),
        "the default when nothing chose an editor"
    );
}

#[test]
fn a_saved_report_is_never_analysed_again_and_the_status_line_says_so() {
    use tdn_tui::tui::effects::Effect;
    let mut doc = calendar();
    doc.saved_report = Some(std::path::PathBuf::from("judged-report.json"));
    let mut app = App::new(doc, AppOptions::default());
    // Even the live screen reads nothing again for a saved report.
    app.headless = false;
    let fx = tdn_tui::tui::update::update(&mut app, Action::Reload);
    assert!(!fx.iter().any(|e| matches!(e, Effect::Reload(_))), "{fx:?}");
    let said = app_status(&app);
    assert!(
        said.contains("nothing was read again") && said.contains("'judged-report.json' (--report)"),
        "{said}"
    );
    let fx = tdn_tui::tui::update::update(&mut app, Action::FileChanged);
    assert!(!fx.iter().any(|e| matches!(e, Effect::Reload(_))), "{fx:?}");
    let said = app_status(&app);
    assert!(
        said.contains("the run's file changed") && said.contains("describes it as it was"),
        "{said}"
    );
    // A report computed at open is read again when its run changes.
    let mut app = App::new(calendar(), AppOptions::default());
    app.headless = false;
    let fx = tdn_tui::tui::update::update(&mut app, Action::FileChanged);
    assert!(fx.iter().any(|e| matches!(e, Effect::Reload(0))), "{fx:?}");
}

#[test]
fn page_down_in_the_warnings_moves_by_the_rows_drawn() {
    let doc = calendar();
    let mut report = doc.report.as_ref().clone();
    report.run.warnings = (0..300)
        .map(|i| Warning {
            message: format!("note {i} about the run"),
            step: Some(format!("w{i}")),
            index: None,
            field: None,
            file: false,
            cut: None,
        })
        .collect();
    for size in [(80, 24), (120, 40), (160, 50), (100, 60)] {
        let run = doc.run.as_ref().clone();
        let mut h = screen(Document::new(run, report.clone(), None), size, scripted());
        press(&mut h, "W");
        let drawn = h
            .screen()
            .lines()
            .filter(|l| l.contains("⚠ step 'w"))
            .count();
        assert!(drawn > 3, "{size:?}: {}", h.screen());
        press(&mut h, "PageDown");
        let Some(Overlay::Warnings { cursor, .. }) = &h.app.overlay else {
            panic!("the warnings list is open");
        };
        assert_eq!(*cursor, drawn, "{size:?}: one page is the rows drawn");
        // The row the page landed on is drawn, and it is the row after the first page.
        let s = h.screen();
        assert!(s.contains(&format!("step 'w{drawn}'")), "{size:?}: {s}");
    }
}

#[test]
fn page_down_in_the_viewer_moves_by_the_rows_drawn_whatever_the_status_line_takes() {
    // `M` leaves a long message on the status line (three lines at 80 columns).
    for (size, keys) in [
        ((80, 16), "Enter"),
        ((80, 16), "M Enter"),
        ((120, 18), "M Enter"),
    ] {
        // Step s3 with a long input: its detail takes more than a page.
        let doc = calendar();
        let mut run = (*doc.run).clone();
        run.steps[2].input = Some("a line of input\n".repeat(40).into());
        let doc = Document::new(run, (*doc.report).clone(), doc.source.clone());
        let mut h = screen(doc, size, scripted());
        press(&mut h, ": s 3 Enter");
        press(&mut h, keys);
        let s = h.screen();
        let lines: Vec<&str> = s.lines().collect();
        let top = lines.iter().position(|l| l.starts_with("┌ step"));
        let bottom = lines.iter().rposition(|l| l.starts_with('└'));
        let (Some(top), Some(bottom)) = (top, bottom) else {
            panic!("{size:?} {keys}: no viewer\n{s}");
        };
        let drawn = bottom - top - 1;
        press(&mut h, "PageDown");
        let Some(Overlay::Viewer { scroll }) = h.app.overlay else {
            panic!("the viewer is open");
        };
        assert_eq!(
            scroll, drawn,
            "{size:?} {keys}: a page is the rows drawn\n{s}"
        );
    }
}

//! Real framework exports (tests/fixtures/import/real/, sources and licences in its README): each
//! opens with no flag, and its task, final answer, step kinds, tool names and containers are what
//! the file says. Every expected value below was written by reading the file (the trace input and
//! output, the observation types and attributes, the spans' kinds), not by running the importers.

use super::*;

/// What one run of a real export must give.
struct Expect {
    file: &'static str,
    index: Option<usize>,
    format: SourceFormat,
    /// The task exactly (how it starts, when written with a trailing `...`), or `None` when the
    /// file states none that reads as prose.
    task: Option<&'static str>,
    /// How the final answer starts, or `None` when the run gives none.
    answer: Option<&'static str>,
    /// How many steps of each kind.
    kinds: &'static [(StepKind, usize)],
    /// The called tools' names, sorted.
    tools: &'static [&'static str],
    /// The ids of the container steps, sorted.
    containers: &'static [&'static str],
}

const fn expect(file: &'static str, format: SourceFormat) -> Expect {
    Expect {
        file,
        index: None,
        format,
        task: None,
        answer: None,
        kinds: &[],
        tools: &[],
        containers: &[],
    }
}

use StepKind::{Agent, Event, Llm, System, Tool, User};

const EXPECTED: &[Expect] = &[
    Expect {
        task: Some("Create a file called hello.txt with \"Hello, world!\" as the content."),
        answer: Some("Task complete. Created /app/hello.txt with 'Hello, world!'"),
        kinds: &[(System, 3), (User, 1), (Llm, 2), (Tool, 2)],
        tools: &["finish", "str_replace_editor"],
        ..expect("atif/Arize-ai__harbor_openhands.json", SourceFormat::Atif)
    },
    Expect {
        task: Some("Create a file called hello.txt with \"Hello, world!\" as the content."),
        kinds: &[(User, 1), (Llm, 3), (Tool, 3)],
        tools: &["bash_command", "bash_command", "bash_command"],
        ..expect(
            "atif/Arize-ai__harbor_terminus2_timeout.json",
            SourceFormat::Atif,
        )
    },
    Expect {
        task: Some(
            "Compare the latest quarterly revenue for AAPL and MSFT, and summarize any recent news that could impact their stock prices.",
        ),
        answer: Some(
            "Here is a comparison of the latest quarterly revenue for Apple and Microsoft, along with key recent news:",
        ),
        kinds: &[(User, 1), (Llm, 3), (System, 1), (Tool, 4)],
        tools: &[
            "analyst_estimates",
            "financial_search",
            "financial_search",
            "news_search",
        ],
        ..expect(
            "atif/Arize-ai__multi_tool_trajectory.json",
            SourceFormat::Atif,
        )
    },
    Expect {
        task: Some("How to use langfuse for N+1 evaluations?"),
        answer: Some("# N+1 evaluations in Langfuse"),
        kinds: &[(Llm, 3), (Event, 3), (Tool, 1)],
        tools: &["searchLangfuseDocs"],
        containers: &["acf76ba316194a49"],
        ..expect(
            "langfuse/evilmartians__langfuse-2.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some("What is currently trending on Twitter?"),
        answer: Some(
            "To find out what's currently trending on Twitter, you can visit the following resources:",
        ),
        kinds: &[(Agent, 1), (Llm, 4), (Tool, 1)],
        tools: &["duckduckgo_search"],
        containers: &["1cffdfa6fe3412e6"],
        ..expect(
            "langfuse/langfuse__agno-2025-06-11.trace.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some("Say 'Hello World!'"),
        answer: Some("Hello World!"),
        kinds: &[(Event, 1), (Llm, 1)],
        containers: &["95f4f51edeb603d9"],
        ..expect(
            "langfuse/langfuse__autogen-2025-06-06.trace.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some(
            "I'm planning a trip to Barcelona, Spain. Can you research key attractions and landmarks I should visit, and also tell me what the current weather conditions are like there?",
        ),
        answer: Some(
            "Barcelona is a vibrant city known for its rich cultural heritage and stunning architecture",
        ),
        kinds: &[(Agent, 18), (Event, 3), (Llm, 5), (Tool, 3)],
        tools: &["Wikipedia", "Wikipedia", "Wikipedia"],
        containers: &[
            "0eb76c10a47e9086",
            "10b12fd4cca3ef99",
            "39d661bf29b4dbbd",
            "8b26b3ec668cf146",
            "9381f6df60cf8aa3",
            "bf28223502262e87",
            "c48e7d031a4cb886",
            "cb4886242bf214b8",
            "ff8b04dfe1f3e047",
        ],
        ..expect(
            "langfuse/langfuse__beeai-2025-08-01.trace.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some(
            "What are my month over month performance insights the past quarter, by cost, displays, clicks, CTR, sales, CVR? Please split by campaign taxonomy",
        ),
        answer: Some(
            "I couldn't retrieve the month-over-month performance insights for the past quarter",
        ),
        kinds: &[(Llm, 3), (Event, 3), (Tool, 2)],
        tools: &["final_result", "get_custom_report"],
        containers: &["5b9ba1e61e2e10fc", "8b9b68803d88be77", "f858b986537e9e41"],
        ..expect(
            "langfuse/langfuse__csharp-agent-with-gemini-2026-03-09.trace.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some("hi"),
        answer: Some("Hello Langfuse 👋!"),
        kinds: &[(Event, 1), (Agent, 1), (Llm, 2), (Tool, 1)],
        tools: &["say_hello"],
        containers: &["6d8beb2e6a36b133", "86cd4912944ddc41"],
        ..expect(
            "langfuse/langfuse__google-adk-2025-08-28.trace.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some("What is Langfuse?"),
        answer: Some(
            "**Langfuse** is an **open-source observability and evaluation platform specifically designed for Large Language Model (LLM) applications.**",
        ),
        kinds: &[(Llm, 1)],
        ..expect(
            "langfuse/langfuse__google-gemini-2025-08-01.trace.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some(
            "Greet and say goodbye to the user in the same message. Use provided tools to generate a proper greeting. The user name is Bob.",
        ),
        answer: Some("Hello my darling Bob! And, bye my dear Bob!"),
        kinds: &[(Agent, 2), (Event, 5), (Llm, 2), (Tool, 2)],
        tools: &["ByeTool", "HelloTool"],
        containers: &[
            "1b7200380e3316e7",
            "5555afb6655e4d44",
            "6021df46275ad2d8",
            "6a0770019fe7c2b4",
            "bb189bc3771ff83d",
        ],
        ..expect(
            "langfuse/langfuse__koog-2025-08-26.trace.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some("Search the web for 'example' and summarize."),
        answer: Some(
            "The search for \"example\" primarily leads to the website [example.com](https://example.com)",
        ),
        kinds: &[(Event, 6), (Llm, 2), (Tool, 1)],
        tools: &["Web-Search"],
        containers: &[
            "3b239b11cbb2ac0b",
            "98d3e02591797c04",
            "b024c7ee7680b708",
            "c8a18a38a3a115cb",
        ],
        ..expect(
            "langfuse/langfuse__langgraph-python-2025-08-22.trace.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some("What is Langfuse?"),
        answer: Some(
            "Langfuse is a tool designed to help developers monitor and debug applications",
        ),
        kinds: &[(Event, 1), (Llm, 1)],
        containers: &["3344aabdd4e66110"],
        ..expect(
            "langfuse/langfuse__llamaindex-2025-06-05.trace.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some("What's the weather in Tokyo?"),
        answer: Some("Current conditions in Tokyo, Japan: stormy, high around 23°C."),
        kinds: &[(Agent, 1), (Llm, 2), (Tool, 1)],
        tools: &["get_weather"],
        containers: &["4cd6caa32861956a"],
        ..expect(
            "langfuse/langfuse__microsoft-agent-2025-12-17.trace.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some("What's the weather in Tokyo?"),
        answer: Some(
            "The weather in Tokyo is currently sunny. If you need more details like temperature or forecast for the upcoming days, just let me know!",
        ),
        kinds: &[(Agent, 2), (Llm, 2), (Tool, 1)],
        tools: &["get_weather"],
        containers: &["d950b668796240b5", "e5a76f27f51ad40e"],
        ..expect(
            "langfuse/langfuse__openai-agents-2025-09-30.trace.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some("What is the weather like today in San Francisco?"),
        kinds: &[(Event, 1), (Llm, 1), (Tool, 1)],
        tools: &["getWeather"],
        containers: &["1dc6768109615657"],
        ..expect(
            "langfuse/langfuse__vercel-aisdk-2025-11-17.trace.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some("What is Langfuse?"),
        answer: Some("**Langfuse** is an **open-source observability and evaluation platform"),
        kinds: &[(Llm, 1)],
        ..expect(
            "langfuse/langfuse__vertex-ai-2025-08-01.trace.json",
            SourceFormat::Langfuse,
        )
    },
    Expect {
        task: Some(
            "Find information about success criteria for: I need a plan for a workshop on legal aspects of AI agents that conduct transactions to purchase items for users. ...",
        ),
        answer: Some(
            "criteria: Participants can accurately identify and describe the contractual and liability relationships between users, AI agent providers, and third-party merchants.\nreasoning: Understanding these relationships is fundamental",
        ),
        kinds: &[(Agent, 3), (Llm, 3)],
        containers: &[
            "span_0fe2b77fae6941358078f0f3",
            "span_62c8c4960656481aa44a01e3",
            "span_a728e304f4a2422d9d6c27dc",
        ],
        ..expect(
            "openai-agents/dazzaji__traces_2025-06-29_00-23-37.json",
            SourceFormat::OpenAiAgents,
        )
    },
    Expect {
        kinds: &[(Event, 6)],
        ..expect(
            "otel-console/dazzaji__otel_traces_2025-06-29_00-23-24_by_trace.json",
            SourceFormat::OtelConsole,
        )
    },
    Expect {
        index: Some(1),
        kinds: &[(Event, 1)],
        ..expect("otlp/dazzaji__test-traces.json", SourceFormat::Otlp)
    },
    Expect {
        task: Some("What are the latest AI trends in 2024?"),
        answer: Some(
            "In 2024, several key trends have emerged in the field of artificial intelligence",
        ),
        kinds: &[(Agent, 10), (Event, 11), (Llm, 6), (Tool, 2)],
        tools: &["tavily_extract", "tavily_search"],
        // The AGENT and CHAIN spans with spans below them, and `main` (ids in hex; base64 in the file).
        containers: &[
            "08e1b865116dc15f",
            "0ad0d1b5cf82a1ec",
            "13044308f12db74f",
            "29658792fad88477",
            "4b613ab5cfa187ed",
            "4f859e0b5d9ad2ce",
            "55b5642459955673",
            "58e59038499620b0",
            "7eaef117abc63d49",
            "e9b84252adce13dc",
            "eedf08ee18ae3bfe",
        ],
        ..expect("otlp/evilmartians__quo_tav_agent.json", SourceFormat::Otlp)
    },
    Expect {
        task: Some("what are the AI trends in 2025"),
        answer: Some(
            "### 1. Task outcome (short version):\nThe leading forecasts from major analysts",
        ),
        kinds: &[(Llm, 6), (Event, 2)],
        // `main`, whose model calls sit below it.
        containers: &["88836fd17f8ffdac"],
        ..expect(
            "otlp/evilmartians__smol_deep_research_agent.json",
            SourceFormat::Otlp,
        )
    },
    Expect {
        index: Some(0),
        task: Some("redacted input"),
        answer: Some("redacted output"),
        kinds: &[(Agent, 1), (Llm, 5), (Tool, 4)],
        tools: &[
            "edit_prompt_instance",
            "open_llm_evaluator_form",
            "read_prompt_instance",
            "save_prompt",
        ],
        containers: &["0000000000000000"],
        ..expect(
            "phoenix/Arize-ai__pxi_suggestion_traces.json",
            SourceFormat::Phoenix,
        )
    },
    Expect {
        task: Some("can you save this trace to a dataset?"),
        answer: Some(
            "Done! I created the dataset [`golden_examples`](/datasets/fixture-dataset-4/examples) and added this trace's root span as its first example.",
        ),
        kinds: &[(Agent, 1), (Llm, 9), (Tool, 8)],
        tools: &[
            "add_spans_to_dataset",
            "add_spans_to_dataset",
            "ask_user",
            "bash",
            "create_dataset",
            "get_route_info",
            "list_datasets",
            "list_datasets",
        ],
        containers: &["s01"],
        ..expect(
            "phoenix/Arize-ai__pxi_turn_trace.json",
            SourceFormat::Phoenix,
        )
    },
];

fn load_real(e: &Expect) -> Loaded {
    let mut runs = load_path(
        &fixture(&format!("real/{}", e.file)),
        &LoadOptions {
            format: None,
            index: e.index,
        },
    )
    .unwrap_or_else(|err| panic!("{}: {err}", e.file));
    assert_eq!(runs.len(), 1, "{}", e.file);
    runs.remove(0)
}

/// Text that is still a serialised structure: what a task or an answer must never be.
fn serialised(text: &str) -> bool {
    let t: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .take(2)
        .collect();
    matches!(t.as_str(), "{\"" | "{'" | "[{" | "[\"" | "['")
        || text.contains("\"lc\":1")
        || text.contains("\"lc\": 1")
        || text.contains("\"type\":\"constructor\"")
}

#[test]
fn every_real_export_opens_and_reads_as_the_file_says() {
    let mut failures = Vec::new();
    for e in EXPECTED {
        let l = load_real(e);
        let run = &l.run;
        let mut fail = |what: String| failures.push(format!("{}: {what}", e.file));
        if l.source_format != e.format {
            fail(format!("format {:?}, want {:?}", l.source_format, e.format));
        }
        match (e.task, run.task.as_deref()) {
            (Some(want), Some(got))
                if want.strip_suffix(" ...").map_or(want == got, |start| {
                    got.starts_with(start) && !serialised(got)
                }) => {}
            (None, None) => {}
            (want, got) => fail(format!("task {got:?}, want {want:?}")),
        }
        match (e.answer, run.final_answer.as_deref()) {
            (Some(want), Some(got)) if got.starts_with(want) && !serialised(got) => {}
            (None, None) => {}
            (want, got) => fail(format!(
                "answer {:?}, want one starting {want:?}",
                got.map(|g| g.chars().take(160).collect::<String>())
            )),
        }
        let mut kinds: Vec<(StepKind, usize)> = Vec::new();
        for k in StepKind::ALL {
            let n = run.steps.iter().filter(|s| s.kind == k).count();
            if n > 0 {
                kinds.push((k, n));
            }
        }
        let mut want_kinds = e.kinds.to_vec();
        want_kinds.sort_by_key(|(k, _)| StepKind::ALL.iter().position(|x| x == k));
        if kinds != want_kinds {
            fail(format!("kinds {kinds:?}, want {want_kinds:?}"));
        }
        let mut tools: Vec<&str> = run
            .steps
            .iter()
            .filter_map(|s| s.tool.as_ref().map(|t| t.name.as_str()))
            .collect();
        tools.sort_unstable();
        if tools != e.tools {
            fail(format!("tools {tools:?}, want {:?}", e.tools));
        }
        let mut containers: Vec<&str> = run
            .steps
            .iter()
            .filter(|s| s.is_container())
            .map(|s| s.id.as_str())
            .collect();
        containers.sort_unstable();
        if containers != e.containers {
            fail(format!(
                "containers {containers:?}, want {:?}",
                e.containers
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn details_the_exports_record_are_kept() {
    let by = |file: &str| {
        EXPECTED
            .iter()
            .find(|e| e.file == file)
            .map(load_real)
            .unwrap_or_else(|| panic!("{file} is not in the table"))
    };
    // Langfuse (LangGraph): the tool's input was written as a Python literal.
    let lg = by("langfuse/langfuse__langgraph-python-2025-08-22.trace.json");
    let search = lg
        .run
        .steps
        .iter()
        .find_map(|s| s.tool.as_ref())
        .unwrap_or_else(|| panic!("no tool call"));
    assert_eq!(search.arguments, serde_json::json!({"query": "example"}));
    // Koog writes an assistant's calls into `content` as JSON text: they are calls, not text.
    let koog = by("langfuse/langfuse__koog-2025-08-26.trace.json");
    let first_llm = koog
        .run
        .steps
        .iter()
        .find(|s| s.kind == StepKind::Llm)
        .and_then(|s| s.output.clone())
        .unwrap_or_default();
    let names: Vec<&str> = first_llm["tool_calls"]
        .as_array()
        .map(|c| c.iter().filter_map(|x| x["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["HelloTool", "ByeTool"]);
    // Phoenix: the failed tool call keeps its status message.
    let px = by("phoenix/Arize-ai__pxi_turn_trace.json");
    let failed: Vec<&str> = px
        .run
        .steps
        .iter()
        .filter(|s| s.failed())
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(failed, ["s11"]);
    // smolagents through OpenAI's instrumentation: multimodal contents read as text.
    let smol = by("otlp/evilmartians__smol_deep_research_agent.json");
    let first = smol
        .run
        .steps
        .iter()
        .find(|s| s.kind == StepKind::Llm)
        .and_then(|s| s.messages().first())
        .map(|m| m.content.as_str())
        .unwrap_or_default();
    assert!(
        first.starts_with("You are a world expert at analyzing a situation"),
        "{first}"
    );
    // C# Langfuse: an observation names a parent that is not in the file.
    let cs = by("langfuse/langfuse__csharp-agent-with-gemini-2026-03-09.trace.json");
    assert!(
        cs.warnings.iter().any(|w| w
            .message
            .starts_with("1 observation(s) name a parent observation")),
        "{:?}",
        cs.warnings
    );
}

#[test]
fn a_file_of_many_traces_says_its_file_warnings_once() {
    let path = fixture("real/otlp/ymtdzzz__test_data.json");
    let runs = load_path(&path, &LoadOptions::default()).unwrap_or_default();
    assert_eq!(runs.len(), 141, "one run per trace id");
    let out = bin(&["validate", path.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let count = |needle: &str| text.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(
        count("56 JSON value(s) in the file hold no resourceSpans"),
        1,
        "{text}"
    );
    assert_eq!(
        count("the file does not record whether the outcome was right"),
        1
    );
}

#[test]
fn every_real_export_is_analysed_and_no_claim_is_serialised_text() {
    let embedder = FlatEmbedder;
    let opts = AnalyzeOptions {
        reference: ReferenceChoice::FromRun,
        embedder: &embedder,
        confidence: ConfidenceOptions::default(),
        judge: None,
        against: None,
        prices: &tdn_tui::analysis::cost::BUILT_IN_PRICES,
    };
    let mut checked = 0;
    for e in EXPECTED {
        let l = load_real(e);
        let report = analyze(&l, &opts);
        assert_eq!(report.run.steps, l.run.steps.len(), "{}", e.file);
        let as_json = serde_json::to_value(&report).unwrap_or_default();
        for c in as_json["claims"].as_array().into_iter().flatten() {
            let text = c["text"].as_str().unwrap_or_default();
            assert!(!serialised(text), "{}: claim {text:?}", e.file);
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} claims were checked");
}

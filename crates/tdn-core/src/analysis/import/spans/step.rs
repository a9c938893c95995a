//! One span as one step: its kind (from `gen_ai.operation.name`, `openinference.span.kind`,
//! `traceloop.span.kind`, the Vercel AI SDK's `ai.operationId`, the attributes present, else what
//! the format states), its error (status ERROR, exception events, `error.type`), timing, and the
//! parts each convention recovers ([`Parts`]), merged GenAI first, then OpenInference, then the
//! Vercel AI SDK, then what the format gives outside the attributes.
//!
//! Pure; unknown attributes are kept in the step's `attributes`.

use super::{Span, StatusCode};
use super::{genai, langfuse_attrs, openinference, vercel};
use crate::analysis::import::chat;
use serde_json::{Map, Value};

/// What a convention recovered from a span's attributes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parts {
    /// What went in (messages, a query, arguments).
    pub input: Option<Value>,
    /// What came out (text, or text with tool calls).
    pub output: Option<Value>,
    /// `{name, arguments?, call_id?}` for tool spans.
    pub tool: Option<Value>,
    /// Retrieved documents as `{id?, text, source?}`.
    pub documents: Option<Vec<Value>>,
    /// Prompt tokens.
    pub input_tokens: Option<u64>,
    /// Completion tokens.
    pub output_tokens: Option<u64>,
    /// What the call cost in US dollars, as recorded.
    pub cost_usd: Option<f64>,
    /// Tool definitions offered to the model, `{name, description?, parameters?}`.
    pub tools: Vec<Value>,
    /// The agent acting.
    pub agent: Option<String>,
    /// The model called.
    pub model: Option<String>,
    /// Attribute keys (or key prefixes ending in '.') whose content moved into the fields above.
    pub consumed: Vec<&'static str>,
    /// The tool's name is only the span's name: no attribute named the tool.
    pub tool_named_by_span: bool,
}

impl Parts {
    /// Fills what `self` lacks from `other`.
    pub fn or(mut self, other: Parts) -> Parts {
        if self.tool.is_none() {
            self.tool_named_by_span = other.tool_named_by_span;
        }
        self.input = self.input.or(other.input);
        self.output = self.output.or(other.output);
        self.tool = self.tool.or(other.tool);
        self.documents = self.documents.or(other.documents);
        self.input_tokens = self.input_tokens.or(other.input_tokens);
        self.output_tokens = self.output_tokens.or(other.output_tokens);
        self.cost_usd = self.cost_usd.or(other.cost_usd);
        if self.tools.is_empty() {
            self.tools = other.tools;
        }
        self.agent = self.agent.or(other.agent);
        self.model = self.model.or(other.model);
        self.consumed.extend(other.consumed);
        self
    }
}

/// How a span is classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Class {
    /// The step kind.
    pub kind: &'static str,
    /// A convention or the format named the kind (else it is `event` by default).
    pub stated: bool,
    /// A convention or the format names the span a wrapper of others (see `container`).
    pub wrapper: bool,
}

/// A class a convention or the format states.
pub const fn class(kind: &'static str, wrapper: bool) -> Class {
    Class {
        kind,
        stated: true,
        wrapper,
    }
}

/// The step kind of a span.
pub fn classify(span: &Span) -> Class {
    let a = &span.attrs;
    let text = |k: &str| {
        a.get(k)
            .and_then(Value::as_str)
            .map(str::to_ascii_lowercase)
    };
    if let Some(op) = text("gen_ai.operation.name") {
        match op.as_str() {
            "chat" | "text_completion" | "generate_content" | "completion" => {
                return class("llm", false);
            }
            "execute_tool" => return class("tool", false),
            "invoke_agent" | "create_agent" => return class("agent", true),
            "embeddings" => return class("event", false),
            _ => {}
        }
    }
    if let Some(k) = text("openinference.span.kind") {
        match k.as_str() {
            "llm" => return class("llm", false),
            "tool" => return class("tool", false),
            "retriever" | "reranker" => return class("retrieval", false),
            "agent" => return class("agent", true),
            "chain" => return class("event", true),
            "embedding" | "guardrail" | "evaluator" => return class("event", false),
            _ => {}
        }
    }
    let traceloop = text("traceloop.span.kind");
    match traceloop.as_deref() {
        Some("tool") => return class("tool", false),
        Some("agent") => return class("agent", true),
        _ => {}
    }
    if let Some(c) = vercel::classify(a).or_else(|| langfuse_attrs::classify(a)) {
        return c;
    }
    if a.contains_key("gen_ai.tool.name") {
        return class("tool", false);
    }
    let llm_keys = [
        "gen_ai.request.model",
        "gen_ai.system",
        "gen_ai.provider.name",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "llm.request.type",
    ];
    if llm_keys.iter().any(|k| a.contains_key(*k))
        || a.keys()
            .any(|k| k.starts_with("gen_ai.prompt.") || k.starts_with("gen_ai.completion."))
    {
        return class("llm", false);
    }
    // Pydantic AI's agent run (`{agent} run`, recorded through Logfire) names its agent in
    // `agent_name`; the model calls under it carry the GenAI keys above.
    if a.get("agent_name")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.trim().is_empty())
    {
        return class("agent", true);
    }
    // OpenLLMetry's `@workflow` and `@task` decorators wrap the calls made inside them.
    let traceloop_wrapper = matches!(traceloop.as_deref(), Some("workflow" | "task"));
    Class {
        kind: span.kind_hint.unwrap_or("event"),
        stated: span.kind_hint.is_some(),
        wrapper: span.wrapper_hint || traceloop_wrapper,
    }
}

/// The span's failure message, if it failed: status ERROR, an `exception` event (unless the
/// status says OK), or an `error.type` attribute.
pub fn error(span: &Span) -> Option<String> {
    let exception = span
        .events
        .iter()
        .find(|e| e.name == "exception")
        .and_then(|e| {
            let t = e.attrs.get("exception.type").and_then(Value::as_str);
            let m = e.attrs.get("exception.message").and_then(Value::as_str);
            match (t, m) {
                (Some(t), Some(m)) => chat::non_empty(&format!("{t}: {m}")),
                (None, Some(m)) => chat::non_empty(m),
                (Some(t), None) => chat::non_empty(t),
                (None, None) => Some("an exception was recorded".to_owned()),
            }
        });
    let error_type = span
        .attrs
        .get("error.type")
        .and_then(Value::as_str)
        .and_then(chat::non_empty);
    match span.status {
        StatusCode::Error => Some(
            span.status_message
                .clone()
                .or(exception)
                .or(error_type)
                .unwrap_or_else(|| "the span ended with status ERROR".to_owned()),
        ),
        StatusCode::Ok => None,
        StatusCode::Unset => exception.or(error_type),
    }
}

/// Everything one span gives: the step object (without `id` and `parent`, set by the caller)
/// and what the run gathers from it.
pub struct Built {
    /// The step fields.
    pub step: Map<String, Value>,
    /// The step's class.
    pub class: Class,
    /// Tool definitions seen on this span.
    pub tools: Vec<Value>,
    /// The model called.
    pub model: Option<String>,
    /// The tool step's name is only the span's name (see [`Parts::tool_named_by_span`]).
    pub tool_named_by_span: bool,
}

/// Builds the step of one span.
pub fn build(span: &Span) -> Built {
    let class = classify(span);
    let kind = class.kind;
    let parts = genai::extract(span, kind)
        .or(openinference::extract(span, kind))
        .or(vercel::extract(span, kind))
        .or(langfuse_attrs::extract(span, kind))
        .or(span.given.clone());
    let mut step = Map::new();
    step.insert("kind".to_owned(), Value::String(kind.to_owned()));
    if !span.name.is_empty() {
        step.insert("name".to_owned(), Value::String(span.name.clone()));
    }
    if let Some(agent) = &parts.agent {
        step.insert("agent".to_owned(), Value::String(agent.clone()));
    }
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            step.insert(k.to_owned(), v);
        }
    };
    if kind == "llm" {
        put("model", request_model(span, &parts).map(Value::String));
    }
    put("input", parts.input);
    put("output", parts.output);
    put("error", error(span).map(Value::String));
    put("tool", parts.tool);
    put("documents", parts.documents.map(Value::Array));
    put(
        "usage",
        chat::with_cost(
            chat::usage(parts.input_tokens, parts.output_tokens),
            parts.cost_usd,
        ),
    );
    put("started_at", span.start_ns.and_then(ms));
    put("ended_at", span.end_ns.and_then(ms));
    put(
        "attributes",
        Some(Value::Object(kept_attributes(span, &parts.consumed))),
    );
    Built {
        step,
        class,
        tools: parts.tools,
        model: parts.model,
        tool_named_by_span: parts.tool_named_by_span,
    }
}

/// The model a model call asked for: the request model a convention records, else the model
/// the conventions read (a response's, the format's).
fn request_model(span: &Span, parts: &Parts) -> Option<String> {
    [
        "gen_ai.request.model",
        "ai.model.id",
        "llm.model_name",
        "langfuse.observation.model.name",
    ]
    .iter()
    .find_map(|k| span.attrs.get(*k).and_then(Value::as_str))
    .and_then(chat::non_empty)
    .or_else(|| parts.model.clone())
}

fn ms(ns: u64) -> Option<Value> {
    i64::try_from(ns / 1_000_000).ok().map(Value::from)
}

fn kept_attributes(span: &Span, consumed: &[&str]) -> Map<String, Value> {
    let gone = |k: &str| {
        consumed.iter().any(|c| {
            if c.ends_with('.') {
                k.starts_with(c)
            } else {
                k == *c
            }
        })
    };
    let mut out: Map<String, Value> = span
        .attrs
        .iter()
        .filter(|(k, _)| !gone(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(k) = span.kind {
        out.insert("otel.span_kind".to_owned(), Value::String(k.to_owned()));
    }
    let status = match span.status {
        StatusCode::Unset => None,
        StatusCode::Ok => Some("ok"),
        StatusCode::Error => Some("error"),
    };
    if let Some(s) = status {
        out.insert("otel.status_code".to_owned(), Value::String(s.to_owned()));
    }
    let events: Vec<Value> = span
        .events
        .iter()
        .filter(|e| !e.name.starts_with("gen_ai.content."))
        .map(|e| {
            let mut m = Map::new();
            m.insert("name".to_owned(), Value::String(e.name.clone()));
            if !e.attrs.is_empty() {
                m.insert("attributes".to_owned(), Value::Object(e.attrs.clone()));
            }
            Value::Object(m)
        })
        .collect();
    if !events.is_empty() {
        out.insert("otel.events".to_owned(), Value::Array(events));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::Event;
    use super::*;
    use serde_json::json;

    fn span(attrs: Value) -> Span {
        Span {
            trace_id: "t".into(),
            span_id: "s".into(),
            name: "n".into(),
            attrs: match attrs {
                Value::Object(m) => m,
                _ => Map::new(),
            },
            ..Span::default()
        }
    }

    fn kind(attrs: Value) -> (&'static str, bool, bool) {
        let c = classify(&span(attrs));
        (c.kind, c.stated, c.wrapper)
    }

    #[test]
    fn kinds_follow_each_convention() {
        assert_eq!(
            kind(json!({"gen_ai.operation.name": "chat"})),
            ("llm", true, false)
        );
        assert_eq!(
            kind(json!({"gen_ai.operation.name": "execute_tool"})),
            ("tool", true, false)
        );
        assert_eq!(
            kind(json!({"gen_ai.operation.name": "invoke_agent"})),
            ("agent", true, true)
        );
        assert_eq!(
            kind(json!({"openinference.span.kind": "RETRIEVER"})),
            ("retrieval", true, false)
        );
        assert_eq!(
            kind(json!({"openinference.span.kind": "CHAIN"})),
            ("event", true, true)
        );
        assert_eq!(
            kind(json!({"openinference.span.kind": "UNKNOWN"})),
            ("event", false, false),
            "an unknown kind states nothing"
        );
        assert_eq!(
            kind(json!({"gen_ai.prompt.0.content": "x"})),
            ("llm", true, false)
        );
        assert_eq!(kind(json!({"http.method": "GET"})), ("event", false, false));
        // Pydantic AI's agent run, as Logfire records it.
        assert_eq!(
            kind(json!({"agent_name": "qa_agent", "model_name": "gpt-4o", "final_result": "x"})),
            ("agent", true, true)
        );
        assert_eq!(
            kind(json!({"agent_name": "qa_agent", "gen_ai.request.model": "gpt-4o"})),
            ("llm", true, false),
            "a model call that names its agent is still a model call"
        );
        assert_eq!(
            kind(json!({"traceloop.span.kind": "workflow"})),
            ("event", false, true)
        );
        let mut hinted = span(json!({}));
        hinted.kind_hint = Some("llm");
        assert_eq!(classify(&hinted).kind, "llm");
        hinted
            .attrs
            .insert("openinference.span.kind".into(), json!("TOOL"));
        assert_eq!(
            classify(&hinted).kind,
            "tool",
            "a convention wins over the format's hint"
        );
    }

    #[test]
    fn errors_come_from_status_exceptions_or_error_type() {
        let mut s = span(json!({}));
        assert_eq!(error(&s), None);
        s.events.push(Event {
            name: "exception".into(),
            attrs: match json!({"exception.type": "ValueError", "exception.message": "bad id"}) {
                Value::Object(m) => m,
                _ => Map::new(),
            },
        });
        assert_eq!(error(&s).as_deref(), Some("ValueError: bad id"));
        s.status = StatusCode::Error;
        s.status_message = Some("timeout".into());
        assert_eq!(error(&s).as_deref(), Some("timeout"));
        s.status = StatusCode::Ok;
        assert_eq!(error(&s), None);
        assert_eq!(
            error(&span(json!({"error.type": "500"}))).as_deref(),
            Some("500")
        );
    }
}

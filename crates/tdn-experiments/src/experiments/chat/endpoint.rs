//! One request to an OpenAI-compatible chat endpoint (`POST {base}/chat/completions`, the base
//! URL ending in `/v1`, as OpenAI, Azure OpenAI's v1 API, vLLM, Ollama, the llama.cpp server
//! and LiteLLM serve it), over HTTPS with rustls or plain HTTP for a local server, and its reply
//! read back: the text of the first choice and the tokens it cost.
//!
//! The key goes in the `Authorization: Bearer` header and nowhere else: never in a message, an
//! error (an endpoint's error text is scrubbed of it), a log or a file. Blocking; one call per
//! sample, bounded by the time-out it is given.

use super::ChatError;
use super::recorded::Message;
use crate::analysis::model::inert_line;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// Most bytes of a reply read (an answer is text; anything larger is not one).
const MAX_REPLY: u64 = 8 << 20;

/// Where and how to send.
#[derive(Clone)]
pub struct Endpoint {
    /// The full `…/chat/completions` URL.
    pub url: String,
    /// The key, when one is set.
    pub key: Option<String>,
    /// The most the request may take.
    pub timeout: Duration,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &shown_url(&self.url))
            .field("key", &self.key.as_ref().map(|_| "[set]"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The chat completions URL of a base URL (`https://api.openai.com/v1` →
/// `https://api.openai.com/v1/chat/completions`; a URL already ending in `/chat/completions` is
/// kept; a query string stays at the end).
pub fn chat_url(base: &str) -> Result<String, ChatError> {
    let base = base.trim();
    if !(base.starts_with("https://") || base.starts_with("http://")) {
        return Err(ChatError::Setup(format!(
            "TDN_CHAT_URL '{}' is not an http:// or https:// URL; give the endpoint's base URL, ending in /v1 (e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1)",
            inert_line(&shown_url(base))
        )));
    }
    let (path, query) = match base.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (base, None),
    };
    let path = path.trim_end_matches('/');
    let mut url = if path.ends_with("/chat/completions") {
        path.to_owned()
    } else {
        format!("{path}/chat/completions")
    };
    if let Some(q) = query {
        url.push('?');
        url.push_str(q);
    }
    Ok(url)
}

/// A URL as it may be shown: scheme, host and path; no user, password or query.
pub fn shown_url(url: &str) -> String {
    let no_query = url.split(['?', '#']).next().unwrap_or_default();
    match no_query.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = match rest.find('/') {
                Some(i) => rest.split_at(i),
                None => (rest, ""),
            };
            let host = authority.rsplit('@').next().unwrap_or(authority);
            format!("{scheme}://{host}{path}")
        }
        None => no_query.to_owned(),
    }
}

/// What the endpoint answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// The reply's text (its tool calls written out, when it made calls instead).
    pub text: String,
    /// Tokens it reported (total, or prompt + completion).
    pub tokens: Option<f64>,
}

/// The body of one request.
pub fn body(
    model: &str,
    messages: &[Message],
    temperature: Option<f64>,
    seed: u64,
    notes: &mut Vec<String>,
) -> Value {
    let mut b = Map::new();
    b.insert("model".to_owned(), json!(model));
    b.insert("messages".to_owned(), Value::Array(wire(messages, notes)));
    if let Some(t) = temperature {
        b.insert("temperature".to_owned(), json!(t));
    }
    b.insert("seed".to_owned(), json!(seed));
    Value::Object(b)
}

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 64
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// True when every tool result answers a call made before it and every call has its result:
/// the only shape a chat endpoint accepts tool turns in.
fn paired(messages: &[Message]) -> bool {
    let mut open: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for m in messages {
        for c in &m.tool_calls {
            match &c.id {
                Some(id) => {
                    open.insert(id);
                }
                None => return false,
            }
        }
        if m.role == "tool" {
            match m.tool_call_id.as_deref() {
                Some(id) if open.remove(id) => {}
                _ => return false,
            }
        }
    }
    open.is_empty()
}

/// The messages in the OpenAI wire shape. Tool turns go as tool calls and tool messages when
/// they pair up; otherwise (a recording without call ids) they are written out as text, which
/// every endpoint accepts, and a note says so.
fn wire(messages: &[Message], notes: &mut Vec<String>) -> Vec<Value> {
    let has_tools = messages
        .iter()
        .any(|m| m.role == "tool" || !m.tool_calls.is_empty());
    let native = !has_tools || paired(messages);
    if !native {
        notes.push(
            "the call's tool turns do not pair up by id, so they are sent as text".to_owned(),
        );
    }
    messages
        .iter()
        .map(|m| {
            let mut o = Map::new();
            if native {
                o.insert("role".to_owned(), json!(m.role));
                if m.content.is_empty() && !m.tool_calls.is_empty() {
                    o.insert("content".to_owned(), Value::Null);
                } else {
                    o.insert("content".to_owned(), json!(m.content));
                }
                if !m.tool_calls.is_empty() {
                    let calls: Vec<Value> = m
                        .tool_calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": c.arguments}})
                        })
                        .collect();
                    o.insert("tool_calls".to_owned(), Value::Array(calls));
                }
                if let Some(id) = &m.tool_call_id
                    && m.role == "tool"
                {
                    o.insert("tool_call_id".to_owned(), json!(id));
                }
            } else {
                let mut content = m.content.clone();
                for c in &m.tool_calls {
                    if !content.is_empty() {
                        content.push('\n');
                    }
                    content.push_str(&format!("[tool call] {}({})", c.name, c.arguments));
                }
                let role = if m.role == "tool" {
                    "user"
                } else {
                    m.role.as_str()
                };
                if m.role == "tool" {
                    content = format!("[tool result] {content}");
                }
                o.insert("role".to_owned(), json!(role));
                o.insert("content".to_owned(), json!(content));
            }
            if let Some(n) = m.name.as_deref().filter(|n| valid_name(n))
                && m.role != "tool"
            {
                o.insert("name".to_owned(), json!(n));
            }
            Value::Object(o)
        })
        .collect()
}

/// Sends `body` to `ep` and reads the reply.
pub fn send(ep: &Endpoint, body: &Value) -> Result<Reply, ChatError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(ep.timeout))
        .http_status_as_error(false)
        .user_agent(concat!("tdn-tui/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let bytes = serde_json::to_vec(body)
        .map_err(|e| ChatError::Setup(format!("cannot write the request as JSON: {e}")))?;
    let mut req = agent
        .post(&ep.url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json");
    if let Some(k) = &ep.key {
        req = req.header("Authorization", format!("Bearer {k}"));
    }
    let scrub = |s: &str| -> String {
        let s = match &ep.key {
            Some(k) if !k.is_empty() => s.replace(k.as_str(), "[key]"),
            _ => s.to_owned(),
        };
        inert_line(&s).into_owned()
    };
    let shown = shown_url(&ep.url);
    let mut resp = req.send(&bytes[..]).map_err(|e| match e {
        ureq::Error::Timeout(_) => ChatError::Endpoint(format!(
            "the chat endpoint {shown} did not answer within {} s (the runner's time-out)",
            ep.timeout.as_secs()
        )),
        other => ChatError::Endpoint(format!(
            "cannot reach the chat endpoint {shown}: {}",
            scrub(&other.to_string())
        )),
    })?;
    let status = resp.status().as_u16();
    let text = resp
        .body_mut()
        .with_config()
        .limit(MAX_REPLY)
        .read_to_vec()
        .map_err(|e| {
            ChatError::Endpoint(format!(
                "cannot read the reply of the chat endpoint {shown}: {}",
                scrub(&e.to_string())
            ))
        })?;
    if status == 401 || status == 403 {
        return Err(ChatError::Endpoint(format!(
            "the chat endpoint {shown} refused the key (HTTP {status}): check TDN_CHAT_KEY (or OPENAI_API_KEY) and that it may use this model"
        )));
    }
    let parsed: Result<Value, _> = serde_json::from_slice(&text);
    if !(200..300).contains(&status) {
        let why = parsed
            .as_ref()
            .ok()
            .and_then(|v| {
                v.pointer("/error/message")
                    .or_else(|| v.get("error"))
                    .or_else(|| v.get("message"))
                    .or_else(|| v.get("detail"))
            })
            .map(|m| match m {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .unwrap_or_else(|| String::from_utf8_lossy(&text).into_owned());
        return Err(ChatError::Endpoint(format!(
            "the chat endpoint {shown} answered HTTP {status}: {}",
            clip(&scrub(&why), 300)
        )));
    }
    let Ok(v) = parsed else {
        return Err(ChatError::Endpoint(format!(
            "the chat endpoint {shown} answered HTTP {status} with a reply that is not JSON ('{}'); is TDN_CHAT_URL the API's base URL (ending in /v1)?",
            clip(&scrub(&String::from_utf8_lossy(&text)), 120)
        )));
    };
    read_reply(&v).map_err(|why| {
        ChatError::Endpoint(format!(
            "the chat endpoint {shown} answered, but not as a chat completion: {why}"
        ))
    })
}

fn clip(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// The first choice's text and the tokens of a chat completion.
pub fn read_reply(v: &Value) -> Result<Reply, String> {
    let Some(m) = v.pointer("/choices/0/message") else {
        return Err("it holds no choices[0].message".to_owned());
    };
    let mut text = match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    };
    if text.trim().is_empty()
        && let Some(calls) = m.get("tool_calls").and_then(Value::as_array)
    {
        text = calls
            .iter()
            .map(|c| {
                let f = c.get("function").unwrap_or(c);
                let name = f.get("name").and_then(Value::as_str).unwrap_or("?");
                let args = match f.get("arguments") {
                    Some(Value::String(a)) => a.clone(),
                    Some(o) => o.to_string(),
                    None => String::new(),
                };
                format!("{name}({args})")
            })
            .collect::<Vec<_>>()
            .join("\n");
    }
    if text.trim().is_empty() {
        return Err("its first choice holds no text and no tool call".to_owned());
    }
    let u = v.get("usage");
    let n = |k: &str| {
        u.and_then(|u| u.get(k))
            .and_then(Value::as_f64)
            .filter(|x| x.is_finite() && *x >= 0.0)
    };
    let tokens = n("total_tokens").or_else(|| match (n("prompt_tokens"), n("completion_tokens")) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    });
    Ok(Reply { text, tokens })
}

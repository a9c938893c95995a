//! For each failed call, the earlier successful state-changing call that named one of the same
//! ids: the later call worked on something the earlier one had changed. An error about the
//! infrastructure ([`INFRASTRUCTURE`]) is not read so.

use crate::analysis::model::{Json, Run, StepKind};
use crate::analysis::whole_words::PhraseSet;
use hashbrown::HashMap;

/// Phrases of an error about the infrastructure rather than the request: a server error, a
/// time-out, an outage, a rate limit, credentials. The walk back keeps such a failure on the
/// tool or its service, even when the error also names the request. Bare status codes are not
/// listed: "amount exceeds 500" is about the request.
pub const INFRASTRUCTURE: &[&str] = &[
    "internal server error",
    "internal error",
    "server error",
    "bad gateway",
    "gateway timeout",
    "service unavailable",
    "temporarily unavailable",
    "server unavailable",
    "service down",
    "is down",
    "outage",
    "timed out",
    "timeout",
    "time-out",
    "time out",
    "connection refused",
    "connection reset",
    "connection error",
    "connection closed",
    "could not connect",
    "couldn't connect",
    "unable to connect",
    "network error",
    "network unreachable",
    "host unreachable",
    "dns",
    "rate limit",
    "rate-limit",
    "rate limited",
    "too many requests",
    "quota exceeded",
    "unauthorized",
    "unauthorised",
    "forbidden",
    "authentication",
    "not authenticated",
    "credentials",
    "api key",
    "access token",
    "token expired",
    "expired token",
    "permission denied",
];

static INFRA: PhraseSet = PhraseSet::new(INFRASTRUCTURE);

/// At most this many id values are read from one call's arguments.
const MAX_ID_VALUES: usize = 64;
/// At most this many nodes of one call's arguments are visited.
const MAX_ARG_NODES: usize = 2_000;

/// The id-like string values of a call's arguments: at least 4 characters, holding a digit, no
/// white space.
fn id_values(args: &Json) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![args];
    let mut visited = 0usize;
    while let Some(v) = stack.pop() {
        visited += 1;
        if visited > MAX_ARG_NODES || out.len() >= MAX_ID_VALUES {
            break;
        }
        match v {
            Json::String(s) => {
                let t = s.trim();
                if t.chars().count() >= 4
                    && t.chars().any(|c| c.is_ascii_digit())
                    && !t.contains(char::is_whitespace)
                {
                    out.push(t);
                }
            }
            Json::Array(a) => stack.extend(a.iter()),
            Json::Object(o) => stack.extend(o.values()),
            _ => {}
        }
    }
    out
}

pub(super) fn state_sources(
    run: &Run,
    is_mutating: impl Fn(usize) -> bool,
) -> HashMap<usize, (usize, String)> {
    let mut out = HashMap::new();
    let mut changed: HashMap<&str, usize> = HashMap::new();
    for (x, s) in run.steps.iter().enumerate() {
        let Some(call) = s.tool.as_ref().filter(|_| s.kind == StepKind::Tool) else {
            continue;
        };
        // The ids are read only where they count: a successful read-only call's are not.
        match s.error.as_deref() {
            None if is_mutating(x) => {
                for v in id_values(&call.arguments) {
                    changed.insert(v, x);
                }
            }
            None => {}
            Some(err) => {
                if changed.is_empty() || INFRA.find_any_case(err).is_some() {
                    continue;
                }
                let found = id_values(&call.arguments)
                    .iter()
                    .filter_map(|v| changed.get(v).map(|&w| (w, *v)))
                    .max_by_key(|&(w, _)| w);
                if let Some((w, v)) = found {
                    out.insert(x, (w, v.to_owned()));
                }
            }
        }
    }
    out
}

//! What the three JSON toolbox commands (`confidence`, `influence`, `dropped`; influence.md §10)
//! share: reading one JSON object from a file or stdin, reading fields with messages that name
//! them, `--margin | --ratio` and `--band`, and writing one JSON line. They read no config file.

use super::args::StrategyArgs;
use crate::analysis::influence::{
    ConfidenceOptions, DEFAULT_CLEAR_WINNER_MARGIN, DEFAULT_SHORTLIST_BAND, Strategy, non_negative,
    num_text,
};
use crate::analysis::model::inert_line;
use anyhow::{Context, bail};
use serde_json::{Map, Value};
use std::io::Read;
use std::path::Path;

/// Reads the input: `FILE`, or stdin when it is absent or `-`. It must be one JSON object.
pub fn read_input(file: Option<&Path>) -> anyhow::Result<Map<String, Value>> {
    let (text, name) = match file {
        Some(p) if p != Path::new("-") => (
            std::fs::read_to_string(p)
                .with_context(|| format!("cannot read the input file '{}'", p.display()))?,
            p.display().to_string(),
        ),
        _ => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("cannot read the input from stdin")?;
            (s, "stdin".to_owned())
        }
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        if is_overflow(&e) {
            // Valid JSON, but the number does not fit a 64-bit float (1e400).
            anyhow::anyhow!(
                "{name}:{}:{}: a number in the input is too large for a 64-bit float (beyond \
                 about 1.8e308); write an infinite score as the string \"Infinity\" or \
                 \"-Infinity\"",
                e.line(),
                e.column()
            )
        } else {
            anyhow::anyhow!(
                "{name}:{}:{}: the input is not valid JSON ({e}); give one JSON object",
                e.line(),
                e.column()
            )
        }
    })?;
    match value {
        Value::Object(m) => Ok(m),
        _ => bail!(
            "{name}: the input must be one JSON object, not {}",
            kind(&value)
        ),
    }
}

/// True when the parser stopped at a number that is valid JSON but overflows an f64: serde_json
/// reports it as a syntax error whose message starts "number out of range".
fn is_overflow(e: &serde_json::Error) -> bool {
    e.classify() == serde_json::error::Category::Syntax
        && e.to_string().starts_with("number out of range")
}

/// What kind of JSON value this is, for messages.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A required string field.
pub fn string<'a>(m: &'a Map<String, Value>, key: &str, at: &str) -> anyhow::Result<&'a str> {
    match m.get(key) {
        Some(Value::String(s)) => Ok(s),
        None => bail!("{at}{key} is missing; it must be a string"),
        Some(v) => bail!("{at}{key} must be a string, not {}", kind(v)),
    }
}

/// An optional string field (`null` = absent).
pub fn opt_string<'a>(
    m: &'a Map<String, Value>,
    key: &str,
    at: &str,
) -> anyhow::Result<Option<&'a str>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => string(m, key, at).map(Some),
    }
}

/// A required array field.
pub fn array<'a>(m: &'a Map<String, Value>, key: &str, at: &str) -> anyhow::Result<&'a [Value]> {
    match m.get(key) {
        Some(Value::Array(a)) => Ok(a),
        None => bail!("{at}{key} is missing; it must be an array"),
        Some(v) => bail!("{at}{key} must be an array, not {}", kind(v)),
    }
}

/// A number: a JSON number or `"NaN"`, `"Infinity"`, `"-Infinity"`.
pub fn number(v: &Value, what: &str) -> anyhow::Result<f64> {
    num_text::from_value(v).ok_or_else(|| {
        anyhow::anyhow!(
            "{what} is '{}', which is not a number or one of \"NaN\", \"Infinity\", \"-Infinity\"",
            inert_line(&v.to_string())
        )
    })
}

/// Parses `--margin`, `--ratio` and `--band` into validated options: both strategies at once,
/// a value that is not a number, or a negative or NaN value is an error naming the option.
pub fn confidence_options(a: &StrategyArgs) -> anyhow::Result<ConfidenceOptions> {
    let strategy = match (&a.margin, &a.ratio) {
        (Some(_), Some(_)) => {
            bail!("--margin and --ratio cannot be used together; choose one clear-winner rule")
        }
        (Some(t), None) => Strategy::Margin(threshold("--margin", t)?),
        (None, Some(t)) => Strategy::Ratio(threshold("--ratio", t)?),
        (None, None) => Strategy::Margin(DEFAULT_CLEAR_WINNER_MARGIN),
    };
    let band = match &a.band {
        Some(b) => threshold("--band", b)?,
        None => DEFAULT_SHORTLIST_BAND,
    };
    Ok(ConfidenceOptions { strategy, band })
}

fn threshold(option: &str, text: &str) -> anyhow::Result<f64> {
    let x: f64 = text.trim().parse().map_err(|_| {
        anyhow::anyhow!(
            "{option} '{}' is not a number; give a number >= 0, e.g. {option} 0.05",
            inert_line(text)
        )
    })?;
    if !non_negative(x) {
        bail!(
            "{option} '{}' must be a number >= 0 (negative values and NaN are not allowed)",
            inert_line(text)
        );
    }
    Ok(x)
}

/// Writes one JSON object and a newline to stdout.
pub fn print_json(v: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut line = serde_json::to_string(v).context("cannot write the output as JSON")?;
    line.push('\n');
    super::common::write_stdout(&line)?;
    Ok(())
}

//! Opening traces that are not `tdn.run/1`: each importer turns one format into native run JSON,
//! which then passes the same validation as a native file (`analysis::load`).
//!
//! One registry, [`IMPORTERS`], is walked to sniff a file's format, so users never need a flag;
//! `--from` forces one. An importer is a pure function from parsed JSON to run JSON: no I/O.
//! When a run is loaded, the span formats build its steps and context units straight into the
//! run model instead, each step read by the loader as it is made (`built`); `import` and the
//! public entries here always give the run JSON.

mod atif;
pub(crate) mod built;
mod chat;
mod decode;
mod jaeger;
mod langfuse;
mod messages;
mod openai_agents;
mod otel_console;
mod otlp;
mod outcome;
mod phoenix;
mod pyliteral;
mod roles;
mod run_text;
mod span_json;
mod span_rows;
mod spans;
mod tau_bench;
mod tree;
mod units;
mod who_when;

use crate::analysis::document::Document;
use crate::analysis::model::Message;
use crate::analysis::warning::Warning;
use serde_json::{Map, Value};

/// Where a run came from (`run.source_format` in the report; `import --from` names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceFormat {
    /// `tdn.run/1`.
    Native,
    /// OTLP JSON traces (GenAI semantic conventions or OpenInference attributes).
    Otlp,
    /// Span rows: the collector's ClickHouse exporter, Patronus's trace export (TRAIL).
    SpanRows,
    /// A Langfuse trace with its observations.
    Langfuse,
    /// A Who&When benchmark file.
    WhoWhen,
    /// τ-bench result records.
    TauBench,
    /// Phoenix span JSON (its client and REST API).
    Phoenix,
    /// The OpenTelemetry SDK's console exporter (`span.to_json()`).
    OtelConsole,
    /// Jaeger's trace JSON (its UI's download, its query API).
    Jaeger,
    /// The OpenAI Agents SDK's trace export.
    OpenAiAgents,
    /// ATIF agent trajectories (Harbor, OpenHands, Terminus).
    Atif,
    /// A bare array of chat messages (OpenAI-style, or a multi-agent log such as Magentic-One's).
    Messages,
}

impl SourceFormat {
    /// Every format, native first.
    pub const ALL: [SourceFormat; 12] = [
        SourceFormat::Native,
        SourceFormat::Otlp,
        SourceFormat::SpanRows,
        SourceFormat::Langfuse,
        SourceFormat::WhoWhen,
        SourceFormat::TauBench,
        SourceFormat::Phoenix,
        SourceFormat::OtelConsole,
        SourceFormat::Jaeger,
        SourceFormat::OpenAiAgents,
        SourceFormat::Atif,
        SourceFormat::Messages,
    ];

    /// Every format's name, in the order of [`SourceFormat::ALL`] (the values `--from` takes).
    pub const NAMES: [&'static str; SourceFormat::ALL.len()] = {
        let mut out = [""; SourceFormat::ALL.len()];
        let mut i = 0;
        while i < out.len() {
            out[i] = SourceFormat::ALL[i].name();
            i += 1;
        }
        out
    };

    /// The name used by `--from` and `run.source_format`.
    pub const fn name(self) -> &'static str {
        match self {
            SourceFormat::Native => "tdn.run/1",
            SourceFormat::Otlp => "otlp",
            SourceFormat::SpanRows => "span-rows",
            SourceFormat::Langfuse => "langfuse",
            SourceFormat::WhoWhen => "whowhen",
            SourceFormat::TauBench => "taubench",
            SourceFormat::Phoenix => "phoenix",
            SourceFormat::OtelConsole => "otel-console",
            SourceFormat::Jaeger => "jaeger",
            SourceFormat::OpenAiAgents => "openai-agents",
            SourceFormat::Atif => "atif",
            SourceFormat::Messages => "messages",
        }
    }

    /// Parses a `--from` name.
    pub fn parse(s: &str) -> Option<Self> {
        SourceFormat::ALL.into_iter().find(|f| f.name() == s)
    }
}

impl std::fmt::Display for SourceFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One run produced by an importer, as `tdn.run/1` JSON, with the importer's own warnings.
#[derive(Debug)]
pub struct ImportedRun {
    /// A `tdn.run/1` object (validated afterwards by the loader).
    pub value: Value,
    /// What the importer had to guess or drop.
    pub warnings: Vec<Warning>,
    /// Model calls' messages kept out of `value`, by the step's position in `value`'s `steps`
    /// (whose `messages` is `null` meanwhile), as the run model holds them: the loader sets them
    /// on the steps it builds, so an import of many calls never holds them as JSON (issue 28).
    /// Empty once [`ImportedRun::fold_messages`] has written them into `value`, as every run
    /// this module hands out of the crate is.
    pub messages: Vec<(usize, Vec<Message>)>,
    /// The steps and context units, when a span format built them straight into the run model
    /// (loading; `value`'s `steps` is empty and it has no `context_units` meanwhile). `None`
    /// in every run this module hands out of the crate.
    pub(crate) built: Option<built::Built>,
}

impl ImportedRun {
    /// A run whose messages, if any, are in `value`.
    pub fn new(value: Value, warnings: Vec<Warning>) -> ImportedRun {
        ImportedRun {
            value,
            warnings,
            messages: Vec::new(),
            built: None,
        }
    }

    /// Writes the messages kept apart into `value`'s steps, where a native run holds them.
    pub fn fold_messages(&mut self) {
        let messages = std::mem::take(&mut self.messages);
        let Some(Value::Array(steps)) = self.value.get_mut("steps") else {
            return;
        };
        for (step, msgs) in messages {
            if let Some(Value::Object(s)) = steps.get_mut(step) {
                let list = msgs
                    .iter()
                    .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
                    .collect();
                s.insert("messages".to_owned(), Value::Array(list));
            }
        }
    }

    fn folded(mut self) -> ImportedRun {
        self.fold_messages();
        self
    }
}

/// Why an importer refused a document.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ImportError(pub String);

/// A converter from one trace format to `tdn.run/1`.
pub trait Importer: Sync {
    /// The format it reads.
    fn format(&self) -> SourceFormat;
    /// What [`Importer::sniff`] looks for, in a few words, for the message that lists the formats
    /// tried on a file none recognised.
    fn looks_for(&self) -> &'static str;
    /// True when the document looks like this format (cheap: look at keys, not content).
    fn sniff(&self, doc: &Document) -> bool;
    /// How many runs the document holds (for `--index` checks and the picker); one unless the
    /// format can hold several.
    fn count(&self, _doc: &Document) -> usize {
        1
    }
    /// Converts the runs of the document (only the one at `index` when given).
    fn import(&self, doc: Document, index: Option<usize>) -> Result<Vec<ImportedRun>, ImportError>;
}

/// Native runs pass through untouched.
struct Native;

impl Importer for Native {
    fn format(&self) -> SourceFormat {
        SourceFormat::Native
    }

    fn looks_for(&self) -> &'static str {
        "an object with \"format\": \"tdn.run/1\""
    }

    fn sniff(&self, doc: &Document) -> bool {
        // A native run followed by more JSON is still native, so the import names the problem.
        matches!(doc.values().first(), Some(Value::Object(o)) if o.contains_key("format"))
    }

    fn import(
        &self,
        doc: Document,
        _index: Option<usize>,
    ) -> Result<Vec<ImportedRun>, ImportError> {
        match doc {
            Document::One(value) => Ok(vec![ImportedRun::new(value, Vec::new())]),
            Document::Lines(_) => Err(ImportError(
                "a tdn.run/1 file holds one JSON object, but more JSON follows it; remove what comes after the run's closing brace".to_owned(),
            )),
        }
    }
}

/// A file that is one JSON object listing what its run is made of under `key`.
struct Listing {
    /// Where the list is.
    key: &'static str,
    /// What the file is, for the error on JSON lines ("an ATIF trajectory is one JSON object").
    is_one: &'static str,
    /// Where the file keeps its list, for the error when it is missing.
    lists: &'static str,
}

impl Listing {
    /// The one run of `doc`, made by `build` from the object and its list.
    fn import(
        &self,
        doc: Document,
        build: impl FnOnce(&Value, &[Value]) -> ImportedRun,
    ) -> Result<Vec<ImportedRun>, ImportError> {
        let Document::One(v) = doc else {
            return Err(ImportError(format!("{}, not JSON lines", self.is_one)));
        };
        let Some(list) = v.get(self.key).and_then(Value::as_array) else {
            return Err(ImportError(format!(
                "\"{}\" is missing or not an array; {}",
                self.key, self.lists
            )));
        };
        Ok(vec![build(&v, list)])
    }
}

/// Every importer, in sniffing order (native first, so a file with `format` is never imported).
pub static IMPORTERS: &[&dyn Importer] = &[
    &Native,
    &otlp::Otlp,
    &span_rows::SpanRows,
    &langfuse::Langfuse,
    &who_when::WhoWhen,
    &tau_bench::TauBench,
    &phoenix::PHOENIX,
    &otel_console::OTEL_CONSOLE,
    &jaeger::Jaeger,
    &openai_agents::OpenAiAgents,
    &atif::Atif,
    &messages::Messages,
];

/// The importer for a format, when one is built in.
pub fn importer(format: SourceFormat) -> Option<&'static dyn Importer> {
    IMPORTERS.iter().copied().find(|i| i.format() == format)
}

/// The first importer that recognises the document.
pub fn sniff(doc: &Document) -> Option<SourceFormat> {
    IMPORTERS.iter().find(|i| i.sniff(doc)).map(|i| i.format())
}

/// What a message says when nothing recognised the document: what the file holds, then each
/// format tried and what it looked for, one line each.
pub fn why_unknown(doc: &Document) -> String {
    let what = match doc {
        Document::One(Value::Object(_)) => "\"format\" is missing and the object matches no known trace format (a native run starts with \"format\": \"tdn.run/1\")".to_owned(),
        Document::One(Value::Array(items)) => format!(
            "the file holds a JSON array of {} item(s) that matches no known trace format",
            items.len()
        ),
        Document::One(v) => format!(
            "the file holds {}, which no trace format is",
            crate::analysis::document::json_type_name(v)
        ),
        Document::Lines(vs) => format!(
            "the file holds {} JSON values in a row that match no known trace format",
            vs.len()
        ),
    };
    let mut out = format!("{what}; tried, in order:");
    for imp in IMPORTERS {
        out.push_str(&format!("\n  {}: {}", imp.format().name(), imp.looks_for()));
    }
    out
}

/// The item at `index` (the one run `--index` asks for), or every item; `what` names them in the
/// message when the index is past the end ("trace(s)", "record(s)").
pub(crate) fn pick<T>(
    all: Vec<T>,
    index: Option<usize>,
    what: &str,
) -> Result<Vec<T>, ImportError> {
    let Some(i) = index else {
        return Ok(all);
    };
    let n = all.len();
    match all.into_iter().nth(i) {
        Some(one) => Ok(vec![one]),
        None => Err(ImportError(format!(
            "--index {i} is out of range: the file holds {n} {what}, numbered from 0"
        ))),
    }
}

/// Copies the fields of `from` named in `keys` that are present and not null into `to`, each as
/// `prefix.key`: what a format records beyond the run model, kept as it was written.
pub(crate) fn keep_fields(from: &Value, keys: &[&str], prefix: &str, to: &mut Map<String, Value>) {
    for key in keys {
        if let Some(x) = from.get(*key).filter(|x| !x.is_null()) {
            to.insert(format!("{prefix}.{key}"), x.clone());
        }
    }
}

/// A file decoded while its text was parsed, before its runs are built (see [`stream`]).
#[derive(Debug)]
pub struct Streamed {
    decoded: StreamedFile,
}

#[derive(Debug)]
enum StreamedFile {
    Otlp(otlp::Decoded),
    SpanRows(span_rows::Streamed),
    Langfuse(langfuse::Streamed),
}

impl Streamed {
    /// The format it was read as.
    pub fn format(&self) -> SourceFormat {
        match self.decoded {
            StreamedFile::Otlp(_) => SourceFormat::Otlp,
            StreamedFile::SpanRows(_) => SourceFormat::SpanRows,
            StreamedFile::Langfuse(_) => SourceFormat::Langfuse,
        }
    }
}

/// Decodes `text` while it is parsed, when it is in a format read that way (OTLP JSON exports,
/// span rows as an array or ClickHouse's `{"data": [...]}`, Langfuse traces and observation lists): the text is never held as one tree of JSON values
/// beside what it becomes, and the caller may free the text before the runs are built
/// ([`import_streamed`]). `forced` is `--from`. `None` when the text is not such a file (or not
/// valid JSON): [`crate::analysis::load::parse_document`], [`sniff`] and [`to_native_values`] then
/// read it, and give the same runs a streamed file gives.
pub fn stream(text: &str, forced: Option<SourceFormat>) -> Option<Streamed> {
    // Only a file that names what the format lists is tried, so other files are parsed once.
    let names = |name: &[u8]| memchr::memmem::find(text.as_bytes(), name).is_some();
    let otlp = match forced {
        None => names(b"resourceSpans") || names(b"resource_spans") || names(b"batches"),
        Some(f) => f == SourceFormat::Otlp,
    };
    if otlp && let Some(decoded) = otlp::decode_text(text, forced.is_some()) {
        return Some(Streamed {
            decoded: StreamedFile::Otlp(decoded),
        });
    }
    let rows = match forced {
        None => names(b"SpanId") || names(b"span_id"),
        Some(f) => f == SourceFormat::SpanRows,
    };
    if rows && let Some(decoded) = span_rows::decode_text(text, forced.is_some()) {
        return Some(Streamed {
            decoded: StreamedFile::SpanRows(decoded),
        });
    }
    let langfuse = match forced {
        None => {
            names(b"\"observations\"")
                || (names(b"\"type\"") && (names(b"\"traceId\"") || names(b"\"startTime\"")))
        }
        Some(f) => f == SourceFormat::Langfuse,
    };
    if langfuse && let Some(decoded) = langfuse::decode_text(text, forced.is_some()) {
        return Some(Streamed {
            decoded: StreamedFile::Langfuse(decoded),
        });
    }
    None
}

/// The runs of a streamed file (only the one at `index` when given), as [`to_native_values`]
/// gives them for the parsed file.
pub fn import_streamed(
    streamed: Streamed,
    index: Option<usize>,
) -> Result<Vec<ImportedRun>, ImportError> {
    let runs = import_streamed_apart(streamed, index)?;
    Ok(runs.into_iter().map(ImportedRun::folded).collect())
}

/// [`import_streamed`], the model calls' messages left apart (see [`ImportedRun::messages`]).
pub(crate) fn import_streamed_apart(
    streamed: Streamed,
    index: Option<usize>,
) -> Result<Vec<ImportedRun>, ImportError> {
    import_streamed_into(streamed, index, built::Build::Json)
}

/// [`import_streamed_apart`], the steps built where `build` says (see [`built::Build`]).
pub(crate) fn import_streamed_into(
    streamed: Streamed,
    index: Option<usize>,
    build: built::Build,
) -> Result<Vec<ImportedRun>, ImportError> {
    if let Some(i) = index {
        let n = match &streamed.decoded {
            StreamedFile::Otlp(d) => otlp::count_decoded(d),
            StreamedFile::SpanRows(s) => s.count(),
            StreamedFile::Langfuse(s) => s.count(),
        };
        if i >= n {
            return Err(ImportError(format!(
                "--index {i} is out of range: the file holds {n} run(s), numbered from 0"
            )));
        }
    }
    match streamed.decoded {
        StreamedFile::Otlp(d) => otlp::import_decoded(d, index, build),
        StreamedFile::SpanRows(s) => span_rows::import_streamed(s, index, build),
        StreamedFile::Langfuse(s) => langfuse::import_streamed(s, index, build),
    }
}

/// Runs the importer for `format` on the document.
pub fn to_native_values(
    format: SourceFormat,
    doc: Document,
    index: Option<usize>,
) -> Result<Vec<ImportedRun>, ImportError> {
    let runs = to_native_values_apart(format, doc, index)?;
    Ok(runs.into_iter().map(ImportedRun::folded).collect())
}

/// [`to_native_values`], the model calls' messages left apart (see [`ImportedRun::messages`]).
pub(crate) fn to_native_values_apart(
    format: SourceFormat,
    doc: Document,
    index: Option<usize>,
) -> Result<Vec<ImportedRun>, ImportError> {
    to_native_values_into(format, doc, index, built::Build::Json)
}

/// [`to_native_values_apart`], the steps of a span format built where `build` says (see
/// [`built::Build`]); other formats give run JSON.
pub(crate) fn to_native_values_into(
    format: SourceFormat,
    doc: Document,
    index: Option<usize>,
    build: built::Build,
) -> Result<Vec<ImportedRun>, ImportError> {
    let imp = importer(format).ok_or_else(|| {
        ImportError(format!(
            "the {} importer is not available in this build",
            format.name()
        ))
    })?;
    if let Some(i) = index {
        let n = imp.count(&doc);
        if format != SourceFormat::Native && i >= n {
            return Err(ImportError(format!(
                "--index {i} is out of range: the file holds {n} run(s), numbered from 0"
            )));
        }
    }
    match format {
        SourceFormat::Otlp => otlp::import_into(doc, index, build),
        SourceFormat::SpanRows => span_rows::import_into(doc, index, build),
        SourceFormat::Langfuse => langfuse::import_into(doc, index, build),
        SourceFormat::Phoenix | SourceFormat::OtelConsole => {
            span_json::import_into(&doc, index, build)
        }
        SourceFormat::Jaeger => jaeger::import_into(&doc, index, build),
        SourceFormat::OpenAiAgents => openai_agents::import_into(doc, index, build),
        _ => imp.import(doc, index),
    }
}

#[cfg(test)]
mod tests;

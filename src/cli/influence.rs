//! `influence`: score evidence against an answer, JSON in and out (influence.md §10). Reads no
//! config file; exit 0 on success, 2 for bad usage, input or weights, 1 when the embedder fails.

use super::args::InfluenceArgs;
use super::common::EXIT_FAILURE;
use super::toolbox::{
    array, confidence_options, kind, number, opt_string, print_json, read_input, string,
};
use crate::analysis::influence::{
    EvidenceItem, ScoreError, ScoreRequest, Weights, WeightsError, ranking_confidence,
    score_contrastive, score_influence, score_lexical,
};
use crate::analysis::model::inert_line;
use crate::experiments::embedder::from_name;
use serde_json::{Map, Value, json};
use std::process::ExitCode;

/// Which scorer ranks the evidence.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scorer {
    Semantic,
    Lexical,
    Contrastive,
}

impl Scorer {
    fn name(self) -> &'static str {
        match self {
            Scorer::Semantic => "semantic",
            Scorer::Lexical => "lexical",
            Scorer::Contrastive => "contrastive",
        }
    }
}

/// Runs the subcommand.
pub fn run(args: &InfluenceArgs) -> anyhow::Result<ExitCode> {
    let opts = confidence_options(&args.strategy)?;
    let scorer = match args.scorer.as_deref() {
        None => None,
        Some("semantic") => Some(Scorer::Semantic),
        Some("lexical") => Some(Scorer::Lexical),
        Some("contrastive") => Some(Scorer::Contrastive),
        Some(other) => anyhow::bail!(
            "--scorer '{}' is not one of semantic, lexical, contrastive",
            crate::analysis::model::inert_line(other)
        ),
    };
    let input = read_input(args.file.as_deref())?;
    let answer = string(&input, "answer", "")?;
    let reference = opt_string(&input, "reference", "")?;
    let scorer = scorer.unwrap_or(if reference.is_some() {
        Scorer::Contrastive
    } else {
        Scorer::Semantic
    });
    if scorer == Scorer::Contrastive && reference.is_none() {
        anyhow::bail!(
            "--scorer contrastive needs a \"reference\" answer in the input; add one or use --scorer semantic"
        );
    }
    let evidence = evidence(&input)?;
    let mut req = ScoreRequest::new(answer, &evidence);
    if let Some(w) = input.get("weights").filter(|w| !w.is_null()) {
        req.weights = weights(w)?;
    }
    if let Some(t) = input.get("persistence_threshold").filter(|t| !t.is_null()) {
        req.persistence_threshold = number(t, "persistence_threshold")?;
    }

    let (result, embedder_name) = match scorer {
        Scorer::Lexical => (score_lexical(&req), None),
        Scorer::Semantic | Scorer::Contrastive => {
            let name = args.embedder.as_deref().unwrap_or("hashed");
            let embedder = from_name(name).map_err(anyhow::Error::msg)?;
            let result = match (scorer, reference) {
                (Scorer::Contrastive, Some(r)) => score_contrastive(&req, r, embedder.as_ref()),
                _ => score_influence(&req, embedder.as_ref()),
            };
            (result, Some(embedder.name().to_owned()))
        }
    };
    let scores = match result {
        Ok(s) => s,
        Err(ScoreError::Embed(e)) => {
            eprintln!("tdn-tui: the embedder failed: {e}");
            return Ok(ExitCode::from(EXIT_FAILURE));
        }
        Err(ScoreError::Weights(e)) => anyhow::bail!("{}", weights_message(&input, &e)),
        Err(e) => anyhow::bail!("{e}"),
    };
    let pairs: Vec<(&str, f64)> = scores.iter().map(|s| (s.id.as_str(), s.score)).collect();
    let confidence = ranking_confidence(&pairs, &opts);
    print_json(&json!({
        "ranked_by": scorer.name(),
        "embedder": embedder_name,
        "scores": scores,
        "confidence": confidence,
    }))?;
    Ok(ExitCode::SUCCESS)
}

/// `evidence`: `[{"id", "text", "ancestors"?}]`.
fn evidence(input: &Map<String, Value>) -> anyhow::Result<Vec<EvidenceItem<'_>>> {
    let mut out = Vec::new();
    for (i, e) in array(input, "evidence", "")?.iter().enumerate() {
        let at = format!("evidence[{i}].");
        let Value::Object(m) = e else {
            anyhow::bail!(
                "evidence[{i}] must be an object {{\"id\", \"text\", \"ancestors\"?}}, not {}",
                kind(e)
            );
        };
        let ancestors = match m.get("ancestors") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(j, t)| {
                    t.as_str().ok_or_else(|| {
                        anyhow::anyhow!("{at}ancestors[{j}] must be a string, not {}", kind(t))
                    })
                })
                .collect::<anyhow::Result<_>>()?,
            Some(v) => anyhow::bail!("{at}ancestors must be an array of strings, not {}", kind(v)),
        };
        out.push(EvidenceItem {
            id: string(m, "id", &at)?,
            text: string(m, "text", &at)?,
            ancestors,
        });
    }
    Ok(out)
}

/// The message of weights that fail validation, quoting the bad weight as the input wrote it
/// (`'Infinity'`, not the parsed `inf`).
fn weights_message(input: &Map<String, Value>, e: &WeightsError) -> String {
    let written = e.weight().and_then(|k| {
        let v = input.get("weights")?.get(k)?;
        Some(match v {
            Value::String(s) => inert_line(s).into_owned(),
            other => inert_line(&other.to_string()).into_owned(),
        })
    });
    match (e.weight(), written) {
        (Some(k), Some(w)) => format!(
            "weights.{k} is '{w}'; every weight must be a finite number >= 0 (not NaN, Infinity or negative)"
        ),
        _ => format!("weights: {e}"),
    }
}

/// `weights`: all four keys, each a number or a non-finite string (validated by the scorer).
fn weights(v: &Value) -> anyhow::Result<Weights> {
    let Value::Object(m) = v else {
        anyhow::bail!(
            "weights must be an object {{\"fa\", \"avg\", \"persist\", \"depth\"}}, not {}",
            kind(v)
        );
    };
    let get = |k: &str| -> anyhow::Result<f64> {
        let x = m.get(k).ok_or_else(|| {
            anyhow::anyhow!("weights.{k} is missing; give all four of fa, avg, persist, depth")
        })?;
        number(x, &format!("weights.{k}"))
    };
    Ok(Weights {
        fa: get("fa")?,
        avg: get("avg")?,
        persist: get("persist")?,
        depth: get("depth")?,
    })
}

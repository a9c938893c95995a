//! Writes a generated run of the benchmarks (`benches/support/gen.rs`) to stdout, the same bytes
//! `benches/support/gen_runs.py` writes (docs/performance.md):
//!
//! `cargo run --release --example gen_run -- SHAPE STEPS [--vocab N] [--words LOW-HIGH]
//! [--pool N] [--digits N] [--reuse PERCENT] [--mix PERCENT]`
//!
//! SHAPE is `distinct`, `repeating`, `vocab` (a small vocabulary), `otlp` (the same talk as an
//! OTLP export of STEPS spans), `langfuse` or `span-rows` (those spans as a Langfuse trace or as
//! span rows; not in `gen_runs.py`); the options set the small vocabulary's knobs (`gen.rs`,
//! `Vocab`).

#[path = "../benches/support/gen.rs"]
mod gen_runs;

use gen_runs::{
    Shape, Vocab, langfuse_export, otlp_export, run_value, span_rows_export, vocab_run,
};
use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: gen_run distinct|repeating|vocab|otlp|langfuse|span-rows STEPS [--vocab N] [--words LOW-HIGH] [--pool N] [--digits N] [--reuse PERCENT] [--mix PERCENT]";
    let mut args = std::env::args().skip(1);
    let shape = args.next().and_then(|s| Shape::named(&s)).ok_or(usage)?;
    let steps: usize = args.next().ok_or(usage)?.parse()?;
    let mut p = Vocab::default();
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(usage)?;
        match flag.as_str() {
            "--vocab" => p.words = value.parse()?,
            "--words" => {
                let (lo, hi) = value.split_once('-').ok_or(usage)?;
                p.sentence = (lo.parse()?, hi.parse()?);
            }
            "--pool" => p.pool = value.parse()?,
            "--digits" => p.digits = value.parse()?,
            "--reuse" => p.reuse = value.parse()?,
            "--mix" => p.mix = value.parse()?,
            _ => return Err(usage.into()),
        }
    }
    let v = match shape {
        Shape::Vocab => vocab_run(steps, &p),
        Shape::Otlp => otlp_export(steps, &p),
        Shape::Langfuse => langfuse_export(steps, &p),
        Shape::SpanRows => span_rows_export(steps, &p),
        _ => run_value(shape, steps),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer(&mut out, &v)?;
    out.flush()?;
    Ok(())
}

//! Reading a native run straight from its file, a block at a time (issue 11: the whole text of
//! a 47 MB run held beside the run built from it made the load the biggest hump of the peak
//! memory). `split.rs` scans the blocks as they come; each run of whole elements of the steps
//! array is checked as UTF-8, parsed and built in parallel exactly as `parallel.rs` does it,
//! taken in order, and dropped before more is read. Only the text around the array is kept, to
//! read the run's own fields as `parallel.rs` does.
//!
//! The result is what `parallel.rs` gives for the file's text. Anything it is not sure of (the
//! scan refuses, bytes that are not UTF-8 anywhere, an element that is not one JSON value, an I/O
//! error, a file that is not a regular file, is too big, or changes size while it is read) gives
//! `None`, and the caller reads the file whole as before, so every message stays what it was.

use super::parallel::{MIN_STEPS_PER_TASK, Side, build, parse, read_top};
use super::split::{Batch, Splitter};
use super::stream::Streamed;
use super::{PendingUnits, Steps, Taken, finish, head, read_units, top_fields};
use crate::analysis::load::MAX_RUN_BYTES;
use crate::analysis::load::error::RunError;
use crate::analysis::load::warning::Warning;
use crate::analysis::model::{Run, Step};
use crate::analysis::progress::{Progress, Stage};
use rayon::prelude::*;
use serde_json::{Map, Value};
use std::io::Read;
use std::path::Path;

/// How much is read and parsed at a time (a parameter so that tests can cut anywhere).
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Bytes read from the file at a time.
    pub block: usize,
    /// Bytes of whole elements gathered before they are parsed together.
    pub batch: usize,
}

/// A few megabytes: enough steps per batch to keep every thread busy, little beside the run.
pub const SIZES: Sizes = Sizes {
    block: 1 << 20,
    batch: 4 << 20,
};

/// Reads the file at `path` as a native run, `sizes` at a time; `None` leaves it to the reader
/// of the whole text. Shows the bytes read up to the steps ([`Stage::Reading`]), then the steps
/// read ([`Stage::Loading`]).
pub fn run_from_file(path: &Path, progress: &Progress, sizes: Sizes) -> Option<Streamed> {
    let file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_RUN_BYTES {
        return None;
    }
    let size = meta.len();
    progress.stage(Stage::Reading, size);
    let mut reader = Reader {
        file,
        split: Splitter::new(),
        block: vec![0_u8; sizes.block.max(1)],
        read: 0,
        size,
        loading: false,
        eof: false,
    };
    let mut taker = Taker::default();
    reader.fill(sizes.batch, progress)?;
    // Once the steps have started, the text before them is whole: the run's own fields are
    // read from it beside the steps, on the guess (checked once the file has ended) that only
    // the object's `}` follows the steps (issue 11: read after the steps, the context units
    // took a core alone for 0.05 s at 100,000 steps).
    let early_text = reader.split.before_steps().map(<[u8]>::to_vec);
    let (early, steps_read) = rayon::join(
        || early_text.map(|before| read_head(before, b"}")),
        || read_steps(&mut reader, &mut taker, sizes, progress),
    );
    steps_read?;
    let Reader {
        split, read, block, ..
    } = reader;
    drop(block);
    if read != size {
        return None;
    }
    let (before, after) = split.into_rest()?;
    let head = match early {
        Some(early) if only_closes(&after) => early,
        _ => read_head(before, &after),
    }?;
    let (run, obj, w, units) = match head {
        Ok(head) => head,
        Err(e) => return Some(Streamed::Failed(e)),
    };
    if let Some(e) = taker.error {
        return Some(Streamed::Failed(e));
    }
    let (run, w) = finish(run, obj, units, taker.steps, w);
    Some(Streamed::Loaded(Box::new(run), w))
}

/// The run's own fields, as read from the text around the steps: its head, the fields left,
/// the warnings and the context units, or the error in its required fields.
type Head = Result<(Run, Map<String, Value>, Vec<Warning>, PendingUnits), RunError>;

/// Reads the run's own fields from the text `before` and `after` its steps (the steps array
/// emptied), as `parallel.rs` reads them; `None` when the file is not for this reader.
fn read_head(before: Vec<u8>, after: &[u8]) -> Option<Head> {
    let mut rest = String::from_utf8(before).ok()?;
    rest.push_str("[]");
    rest.push_str(std::str::from_utf8(after).ok()?);
    let mut obj = read_top(rest)?;
    let run = match head(&mut obj) {
        Ok((run, _placeholder)) => run,
        Err(e) => return Some(Err(e)),
    };
    let mut w = Vec::new();
    let run = top_fields(run, &mut obj, &mut w);
    let units = read_units(&mut obj);
    Some(Ok((run, obj, w, units)))
}

/// True when `after` is the object's closing brace with nothing but JSON whitespace around it.
fn only_closes(after: &[u8]) -> bool {
    let mut text = after
        .iter()
        .filter(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    text.next() == Some(&b'}') && text.next().is_none()
}

/// Reads, cuts, builds and takes every batch of steps; `None` when the file is not for this
/// reader.
fn read_steps(
    reader: &mut Reader,
    taker: &mut Taker,
    sizes: Sizes,
    progress: &Progress,
) -> Option<()> {
    let size = reader.size;
    loop {
        let batch = reader.split.take_whole();
        if batch.elements.is_empty() && reader.eof {
            break;
        }
        // This batch is built while the last one's steps are taken and the next one is read
        // and cut (issue 11: taken between batches, one core sat idle).
        let read = reader.read;
        let stopped = taker.error.is_some();
        let first = taker.steps.steps.len();
        let Taker {
            steps: Steps { steps, taken },
            error,
            waiting,
            waiting_from,
            next,
        } = &mut *taker;
        let (built, filled) = rayon::join(
            || build_batch(&batch, steps, next, stopped, (read, size), progress),
            || {
                take_waiting(taken, waiting, *waiting_from, error);
                reader.fill(sizes.batch, progress)
            },
        );
        built?;
        filled?;
        std::mem::swap(waiting, next);
        *waiting_from = first;
        reader.split.recycle(batch.bytes);
    }
    take_waiting(
        &mut taker.steps.taken,
        &mut taker.waiting,
        taker.waiting_from,
        &mut taker.error,
    );
    Some(())
}

/// Room for `more` steps, sized by the whole run's count as guessed from the share of the file
/// read (`read` of `size` bytes), with a sixteenth to spare: the vector of steps (248 bytes a
/// step) then grows about once instead of doubling, when the old and the new vector are both
/// held. It grows by at least an eighth each time, so copies stay linear; whatever is left over
/// is given back when the run is finished.
fn make_room(steps: &mut Vec<Step>, more: usize, (read, size): (u64, u64)) {
    let need = steps.len().saturating_add(more);
    if steps.capacity() >= need {
        return;
    }
    let guess = u64::try_from(need).unwrap_or(u64::MAX).saturating_mul(size) / read.max(1);
    let guess = usize::try_from(guess.saturating_add(guess / 16)).unwrap_or(need);
    let at_least = steps.capacity().saturating_add(steps.capacity() / 8);
    let want = guess.max(at_least).max(need);
    steps.reserve_exact(want - steps.len());
}

/// The file being read and cut.
struct Reader {
    file: std::fs::File,
    split: Splitter,
    block: Vec<u8>,
    /// Bytes read so far, of `size` when the file was opened.
    read: u64,
    size: u64,
    /// The steps have started (the progress counts steps).
    loading: bool,
    /// The file has ended.
    eof: bool,
}

impl Reader {
    /// Reads blocks until `batch` bytes of whole elements wait, the array has closed with
    /// elements waiting, or the file ends; `None` on an I/O error, a file grown past its size,
    /// or a scan that refuses.
    fn fill(&mut self, batch: usize, progress: &Progress) -> Option<()> {
        while !self.eof {
            let waiting = self.split.whole_bytes();
            if waiting >= batch || (waiting > 0 && self.split.array_done()) {
                return Some(());
            }
            let n = match self.file.read(&mut self.block) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return None,
            };
            self.read += n as u64;
            if self.read > self.size {
                return None;
            }
            self.split.feed(self.block.get(..n)?)?;
            if !self.loading {
                if self.split.in_steps() {
                    progress.stage(Stage::Loading, 0);
                    self.loading = true;
                } else {
                    progress.done(self.read);
                }
            }
        }
        Some(())
    }
}

/// The steps built so far, in order, and what is left to take of them.
#[derive(Default)]
struct Taker {
    steps: Steps,
    /// The first step that stopped the load; later elements are only checked to be JSON.
    error: Option<RunError>,
    /// What the loader still has to check of each step of the last batch built (its steps are
    /// in `steps` already): taken while the next batch is built.
    waiting: Vec<Side>,
    /// The position of the first step of `waiting`.
    waiting_from: usize,
    /// Where the next batch's sides go (kept from batch to batch, emptied).
    next: Vec<Side>,
}

/// Parses and builds a batch of whole elements in parallel, as `parallel.rs` does: the steps
/// straight onto the end of `steps`, what is left to check of each onto `sides` (emptied
/// first). Once the load has `stopped`, the elements are only checked to be JSON. `None` when
/// the batch is not UTF-8 or an element is not one JSON value.
fn build_batch(
    batch: &Batch,
    steps: &mut Vec<Step>,
    sides: &mut Vec<Side>,
    stopped: bool,
    read_of_size: (u64, u64),
    progress: &Progress,
) -> Option<()> {
    sides.clear();
    if batch.elements.is_empty() {
        return Some(());
    }
    let text = std::str::from_utf8(&batch.bytes).ok()?;
    let pieces = &batch.elements;
    if stopped {
        let all_json = pieces
            .par_iter()
            .with_min_len(MIN_STEPS_PER_TASK)
            .all(|piece| text.get(piece.clone()).and_then(parse).is_some());
        progress.add(pieces.len() as u64);
        return all_json.then_some(());
    }
    make_room(steps, pieces.len(), read_of_size);
    let base = steps.len();
    let mut both = (std::mem::take(steps), std::mem::take(sides));
    both.par_extend(
        pieces
            .par_iter()
            .with_min_len(MIN_STEPS_PER_TASK)
            .enumerate()
            .map(|(i, piece)| {
                let one = build(text.get(piece.clone()), base + i);
                progress.add(1);
                one
            }),
    );
    (*steps, *sides) = both;
    (!sides.iter().any(|s| matches!(s, Side::NotJson))).then_some(())
}

/// Takes the steps of `waiting`, the first at position `from`, in order (emptying it); the
/// first that is unusable or repeats an id is kept in `error`, and nothing is taken after it.
fn take_waiting(
    taken: &mut Taken,
    waiting: &mut Vec<Side>,
    from: usize,
    error: &mut Option<RunError>,
) {
    if error.is_some() {
        waiting.clear();
        return;
    }
    taken.reserve(waiting.len());
    for (i, side) in waiting.drain(..).enumerate() {
        let took = match side {
            Side::Built(id, refs, warnings) => taken.take(from + i, id, refs, warnings),
            Side::Unusable(e) => Err(*e),
            // Refused when the batch was built.
            Side::NotJson => Ok(()),
        };
        if let Err(e) = took {
            *error = Some(e);
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::parallel::run_from_text_parallel;
    use super::super::parallel::tests::run_text;
    use super::*;
    use proptest::prelude::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A file of its own in the temporary directory, removed when dropped.
    struct TempFile(std::path::PathBuf);

    impl TempFile {
        fn with(bytes: &[u8]) -> TempFile {
            static N: AtomicUsize = AtomicUsize::new(0);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let path = std::env::temp_dir().join(format!(
                "tdn-file-reader-{nanos}-{}.json",
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::write(&path, bytes).unwrap();
            TempFile(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    /// What the file reader must give for `bytes`: what the parallel reader gives for the text
    /// `read_text` would make of them, and `None` where `read_text` would fail.
    fn expected(bytes: &[u8]) -> Option<Streamed> {
        let bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
        run_from_text_parallel(std::str::from_utf8(bytes).ok()?, &Progress::new())
    }

    /// The file reader gives what [`expected`] says; true when it took the file.
    fn agrees(bytes: &[u8], sizes: Sizes) -> Result<bool, TestCaseError> {
        let file = TempFile::with(bytes);
        let got = run_from_file(&file.0, &Progress::new(), sizes);
        let text = String::from_utf8_lossy(bytes);
        match (got, expected(bytes)) {
            (None, None) => return Ok(false),
            (Some(Streamed::Loaded(run, w)), Some(Streamed::Loaded(run2, w2))) => {
                prop_assert_eq!(run, run2, "{}", text);
                prop_assert_eq!(w, w2, "{}", text);
            }
            (Some(Streamed::Failed(e)), Some(Streamed::Failed(e2))) => {
                prop_assert_eq!(e, e2, "{}", text);
            }
            (g, e) => prop_assert!(false, "file: {:?}; text: {:?}; {} {:?}", g, e, text, sizes),
        }
        Ok(true)
    }

    fn sizes() -> impl Strategy<Value = Sizes> {
        (1..64_usize, 1..256_usize).prop_map(|(block, batch)| Sizes { block, batch })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn a_run_read_from_its_file_in_blocks_is_the_run_read_from_its_text(
            text in run_text(),
            bom in any::<bool>(),
            sizes in sizes(),
        ) {
            let mut bytes = if bom { vec![0xEF, 0xBB, 0xBF] } else { Vec::new() };
            bytes.extend_from_slice(text.as_bytes());
            prop_assert!(agrees(&bytes, sizes)?, "{}", text);
        }

        #[test]
        fn a_damaged_file_reads_the_same_or_is_left_to_the_whole_text_reader(
            text in run_text(),
            at in any::<prop::sample::Index>(),
            how in 0..3_u8,
            insert in prop_oneof![
                Just(&b"\""[..]), Just(&b"\\"[..]), Just(&b"]"[..]), Just(&b","[..]),
                Just(&b"}"[..]), Just(&b"["[..]), Just(&b"\xff"[..]), Just(&b"\xc3"[..]),
                Just(&b"\xef\xbb\xbf"[..]),
            ],
            sizes in sizes(),
        ) {
            let bytes = text.as_bytes();
            let at = at.index(bytes.len() + 1);
            let damaged = match how {
                0 => bytes[..at].to_vec(),
                1 => [&bytes[..at], insert, &bytes[at..]].concat(),
                _ => [insert, bytes].concat(),
            };
            agrees(&damaged, sizes)?;
        }
    }

    #[test]
    fn every_sample_run_is_read_from_its_file() {
        let mut read = 0;
        for path in crate::analysis::testutil::sample_runs() {
            let bytes = std::fs::read(&path).unwrap();
            for sizes in [
                SIZES,
                Sizes {
                    block: 7,
                    batch: 100,
                },
            ] {
                if agrees(&bytes, sizes).unwrap() {
                    read += 1;
                }
            }
        }
        assert!(read >= 20, "{read}");
    }

    /// The run's own fields are read from the text before the steps while the steps are read,
    /// on the guess that nothing but the closing brace follows them; fields after the steps
    /// are read all the same.
    #[test]
    fn fields_after_the_steps_are_read_as_those_before() {
        let steps = r#"[{"id":"a","kind":"llm"},{"id":"b","kind":"tool"}]"#;
        let unit = r#"[{"id":"u1","kind":"document","text":"t","produced_by":"b"}]"#;
        let sizes = Sizes { block: 3, batch: 8 };
        for text in [
            format!(
                r#"{{"format":"tdn.run/1","id":"r","status":"failed","context_units":{unit},"steps":{steps}}}"#
            ),
            format!(
                "{{\"format\":\"tdn.run/1\",\"id\":\"r\",\"status\":\"failed\",\"context_units\":{unit},\"steps\":{steps}\n}}\n "
            ),
            format!(
                r#"{{"format":"tdn.run/1","steps":{steps},"id":"r","status":"failed","context_units":{unit}}}"#
            ),
            format!(
                r#"{{"format":"tdn.run/1","id":"r","context_units":{unit},"steps":{steps},"status":"failed"}}"#
            ),
        ] {
            let file = TempFile::with(text.as_bytes());
            let Some(Streamed::Loaded(run, w)) = run_from_file(&file.0, &Progress::new(), sizes)
            else {
                panic!("not loaded: {text}");
            };
            assert_eq!((run.id.as_str(), run.steps.len()), ("r", 2), "{text}");
            assert!(w.is_empty(), "{text}: {w:?}");
            let by = run
                .context_units
                .first()
                .and_then(|u| u.produced_by.as_ref());
            assert_eq!(by.map(|s| s.as_str()), Some("b"), "{text}");
        }
        // The status only after the steps: the guess read from before them misses it.
        let text = format!(r#"{{"format":"tdn.run/1","id":"r","steps":{steps},"status":"nope"}}"#);
        let file = TempFile::with(text.as_bytes());
        let got = run_from_file(&file.0, &Progress::new(), sizes);
        assert!(
            matches!(&got, Some(Streamed::Failed(e)) if e.to_string().contains("nope")),
            "{got:?}"
        );
    }

    #[test]
    fn it_counts_the_steps_and_leaves_what_is_no_file_or_not_utf8() {
        let text = r#"{"format":"tdn.run/1","id":"r","status":"failed","steps":[{"id":"a","kind":"llm"},{"id":"b","kind":"llm"},{"id":"c","kind":"llm"}]}"#;
        let file = TempFile::with(text.as_bytes());
        let p = Progress::new();
        let sizes = Sizes { block: 5, batch: 1 };
        assert!(matches!(
            run_from_file(&file.0, &p, sizes),
            Some(Streamed::Loaded(..))
        ));
        let s = p.snapshot();
        assert_eq!((s.stage, s.done), (Stage::Loading, 3));
        let mut bytes = text.as_bytes().to_vec();
        bytes.insert(70, 0xff);
        let bad = TempFile::with(&bytes);
        assert!(run_from_file(&bad.0, &Progress::new(), sizes).is_none());
        assert!(run_from_file(&std::env::temp_dir(), &Progress::new(), sizes).is_none());
        let gone = std::env::temp_dir().join("tdn-file-reader-no-such-file.json");
        assert!(run_from_file(&gone, &Progress::new(), sizes).is_none());
    }
}

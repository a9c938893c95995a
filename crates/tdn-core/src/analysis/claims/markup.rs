//! Lines of an answer that are its layout, not something it says (docs/how-it-decides.md,
//! "Claims"): a Markdown heading ("### 1.", "# N+1 evaluations"), a fragment that is only
//! emphasis or code ("_Prerequisites_", "`abn.ts`"), and a file name standing alone
//! ("python_example.py"). Numbers in them are section numbers and names, not facts. Pure; linear
//! in the text.

/// A fragment in emphasis or code of at most this many words is a label.
const LABEL_MAX_WORDS: usize = 6;
/// A file name's extension has at most this many characters.
const EXTENSION_MAX_CHARS: usize = 5;

/// Why `text` is layout rather than a claim, or None.
pub fn layout(text: &str) -> Option<&'static str> {
    let t = text.trim();
    if is_heading(t) {
        return Some("a heading, not a claim");
    }
    if is_label(t) {
        return Some("a label in emphasis or code, not a claim");
    }
    if is_file_name(t) {
        return Some("a file name, not a claim");
    }
    None
}

/// `#` to `######` opening the line, then a space or nothing.
fn is_heading(t: &str) -> bool {
    let hashes = t.chars().take_while(|&c| c == '#').count();
    (1..=6).contains(&hashes)
        && t.get(hashes..)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
}

/// The whole fragment in one pair of `_`, `*` or backticks, holding at most
/// [`LABEL_MAX_WORDS`] words and no other such marker.
fn is_label(t: &str) -> bool {
    ['_', '*', '`'].iter().any(|&m| {
        let inner = t
            .strip_prefix(m)
            .and_then(|r| r.strip_suffix(m))
            .map(str::trim);
        inner.is_some_and(|i| {
            !i.is_empty() && !i.contains(m) && i.split_whitespace().count() <= LABEL_MAX_WORDS
        })
    })
}

/// One token, no spaces, that ends in `.ext` (a letter-only extension of at most
/// [`EXTENSION_MAX_CHARS`]) after a name holding a letter: `abn.ts`, `src/main.rs`. Not a link,
/// not a number ("3.5"), not an abbreviation ("U.S.").
fn is_file_name(t: &str) -> bool {
    if t.is_empty() || t.contains(char::is_whitespace) || t.contains("://") {
        return false;
    }
    let Some((stem, ext)) = t.rsplit_once('.') else {
        return false;
    };
    let ext_ok = (1..=EXTENSION_MAX_CHARS).contains(&ext.chars().count())
        && ext.chars().all(|c| c.is_ascii_alphabetic());
    let name = stem.rsplit('/').next().unwrap_or(stem);
    let stem_ok = name.chars().count() >= 2
        && name.chars().any(char::is_alphabetic)
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !name.contains("..");
    ext_ok && stem_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_labels_and_file_names_are_layout() {
        for t in [
            "### 1.",
            "# N+1 evaluations in Langfuse",
            "## Add an “+1” judge",
            "#",
            "_Prerequisites_",
            "_abn.ts_",
            "`python_example.py`",
            "*Step 2*",
            "abn.ts",
            "src/analysis/main.rs",
            "report_2024.pdf",
        ] {
            assert!(layout(t).is_some(), "{t}");
        }
    }

    #[test]
    fn sentences_numbers_and_abbreviations_are_not() {
        for t in [
            "#1 in sales is Acme.",
            "#hashtag trends",
            "The refund is $50.",
            "3.5",
            "U.S.",
            "e.g.",
            "Paris.",
            "_This whole sentence is emphasised because it matters a lot today_",
            "_a_ and _b_",
            "https://example.com/a.html",
            "The file is abn.ts",
        ] {
            assert_eq!(layout(t), None, "{t}");
        }
    }
}

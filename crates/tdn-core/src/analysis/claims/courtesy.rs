//! Sentences of an answer that assert nothing about the world, so they are `no_claim`
//! (docs/how-it-decides.md, "Claims"): an offer of help ("If you need anything else, feel free
//! to ask!"), an offer or a plan of the agent's ("I can transfer you to a human agent", "I will
//! look into it", "Let's check the page"), a request to the user ("Please hold on"), a courtesy
//! ("I understand your concern", "No problem at all!"), a wish ("I hope it goes well"), and a
//! heading or lead-in ("Here are the details:", "Payment:"). Each holds no number or id (but a
//! lead-in of at most six words may: "Major Use Cases by 2025:"), and layout is never a claim
//! (`markup`: a Markdown heading, a label in emphasis, a file name); a
//! courtesy also no negation, no word saying something was done and at most three content
//! words. English only; plain matching, no I/O.

use super::words::{Term, TermKind, lower_text, terms};
use crate::analysis::whole_words::find_phrase;

/// Words that say an action was carried out ("Your order is confirmed").
pub const SUCCESS_WORDS: &[&str] = &[
    "booked",
    "scheduled",
    "rescheduled",
    "rebooked",
    "created",
    "confirmed",
    "refunded",
    "cancelled",
    "canceled",
    "sent",
    "emailed",
    "updated",
    "changed",
    "completed",
    "processed",
    "placed",
    "reserved",
    "added",
    "removed",
    "deleted",
    "paid",
    "issued",
    "submitted",
    "transferred",
    "saved",
    "shipped",
    "ordered",
    "credited",
    "charged",
    "applied",
    "approved",
    "done",
    "moved",
    "upgraded",
    "downgraded",
    "activated",
    "deactivated",
    "registered",
    "renewed",
    "returned",
    "exchanged",
    "closed",
    "opened",
    "set up",
    "all set",
    "taken care of",
    "went through",
    "gone through",
    "succeeded",
    "successful",
    "successfully",
    "accepted",
    "granted",
    "finalized",
    "finalised",
    "executed",
];

/// Words of pleasantries: a sentence made only of these (and stop words) is not a claim, and
/// they do not count when a claim is matched to its sources.
pub const PLEASANTRIES: &[&str] = &[
    "thanks",
    "thank",
    "patience",
    "sorry",
    "trouble",
    "inconvenience",
    "glad",
    "happy",
    "help",
    "helps",
    "welcome",
    "great",
    "good",
    "nice",
    "hope",
    "hello",
    "hi",
    "hey",
    "please",
    "feel",
    "reach",
    "anything",
    "else",
    "let",
    "know",
    "assist",
    "pleasure",
    "apologize",
    "apologies",
    "cheers",
    "regards",
    "wishes",
    "understand",
    "understood",
    "certainly",
    "sure",
    "okay",
    "ok",
    "course",
    "wonderful",
    "enjoy",
    "luck",
    "morning",
    "afternoon",
    "evening",
    "bye",
    "goodbye",
    "noted",
    "alright",
    "absolutely",
    "appreciate",
];

/// Openings of an offer of help (after any "If …," clause).
const INVITATIONS: &[&str] = &[
    "feel free",
    "please feel free",
    "don't hesitate",
    "do not hesitate",
    "please don't hesitate",
    "please do not hesitate",
    "let me know",
    "please let me know",
    "just let me know",
    "do let me know",
    "reach out",
    "please reach out",
    "contact us",
    "please contact us",
];

/// Openings of an offer or a plan of the agent's (after any "If …," or "However,").
const OFFERS: &[&str] = &[
    "i can",
    "i could",
    "i'd be happy",
    "i would be happy",
    "i'll be happy",
    "i will be happy",
    "i'm happy to",
    "i am happy to",
    "i'd be glad",
    "i would be glad",
    "i'll be glad",
    "i will",
    "i'll",
    "i am going to",
    "i'm going to",
    "i shall",
    "let me",
    "allow me",
    "we can",
    "we could",
    "we will",
    "we'll",
    "let's",
    "let us",
    "shall i",
    "should i",
    "would you like",
    "i recommend",
    "i suggest",
    "i would recommend",
    "i'd recommend",
    "i would suggest",
    "i'd suggest",
    "i advise",
    "i would advise",
    "it's best to",
    "it is best to",
    "it would be best to",
    "it might be best to",
    "it may be best to",
    "you may want to",
    "you might want to",
    "i'm here",
    "i am here",
];

/// Words that, right after an offer's opening, make it a statement ("I can confirm …", "I
/// could not find …", "We can see that …").
const OFFER_EXCEPTIONS: &[&str] = &[
    "not", "never", "see", "confirm", "verify", "tell", "assure", "find", "only", "say", "state",
    "report", "notice", "no",
];

/// Openings of a request to the user.
const REQUESTS: &[&str] = &[
    "please",
    "kindly",
    "hold on",
    "one moment",
    "just a moment",
    "give me a moment",
    "bear with me",
    "wait a moment",
];

/// Words that, right after "please", introduce a statement ("Please note that …").
const REQUEST_EXCEPTIONS: &[&str] = &[
    "note",
    "be",
    "keep",
    "remember",
    "understand",
    "know",
    "find",
    "see",
    "refer",
    "allow",
    "expect",
    "observe",
    "consider",
];

/// Openings of a courtesy: thanks, apologies, sympathy, acknowledgement.
const COURTESIES: &[&str] = &[
    "i understand",
    "i completely understand",
    "i totally understand",
    "i fully understand",
    "i can understand",
    "i'm sorry",
    "i am sorry",
    "i'm truly sorry",
    "i'm very sorry",
    "i'm so sorry",
    "i'm really sorry",
    "i am truly sorry",
    "i am very sorry",
    "i am so sorry",
    "sorry",
    "i apologize",
    "i apologise",
    "i sincerely apologize",
    "my apologies",
    "apologies",
    "i appreciate",
    "thank you",
    "thanks",
    "no problem",
    "not a problem",
    "no worries",
    "take your time",
    "you're welcome",
    "you are welcome",
    "my pleasure",
    "i'm glad",
    "i am glad",
    "glad to",
    "happy to help",
    "understood",
    "got it",
    "of course",
    "certainly",
    "absolutely",
    "sure",
    "great",
    "perfect",
    "alright",
    "all right",
    "okay",
    "ok",
    "i see",
    "i hear you",
];

/// Openings of a wish (beside the wishes of `label::WISHES`, which the label reads itself).
const HOPES: &[&str] = &[
    "i hope",
    "hope you",
    "hoping",
    "i wish you",
    "wish you",
    "wishing",
];

/// Openings of a conditional or time clause that the main clause follows after a comma.
const CONDITIONS: &[&str] = &[
    "if",
    "when",
    "whenever",
    "once",
    "should you",
    "in case",
    "as soon as",
    "after",
    "before",
    "until",
    "while",
];

/// Words that turn a courtesy into a statement ("Sorry, I could not find it").
const NEGATION_WORDS: &[&str] = &[
    "not", "no", "never", "unable", "cannot", "can't", "couldn't", "won't", "isn't", "wasn't",
    "didn't", "doesn't", "don't", "aren't", "weren't", "haven't", "hasn't",
];

/// A lead-in ending in a colon of at most this many words is one even when it holds a number.
const LEAD_IN_MAX_WORDS: usize = 6;

/// At most this many content words after a courtesy's opening.
const COURTESY_MAX_WORDS: usize = 3;

/// Why `text` (a sentence or a clause) asserts nothing, or None when it may.
pub fn non_claim(text: &str) -> Option<&'static str> {
    let lower = lower_text(text).replace(['*', '`'], "");
    let trimmed = lower.trim();
    let ts = terms(text);
    let keys = ts.iter().any(Term::is_key);
    let success = find_phrase(trimmed, SUCCESS_WORDS).is_some();
    if let Some(why) = super::markup::layout(text) {
        return Some(why);
    }
    // A short lead-in is one even with a number in it ("Major Use Cases by 2025:").
    let lead_in = trimmed.trim_end_matches(['_', ' ']).ends_with(':') && !success;
    if lead_in && words_of(trimmed).len() <= LEAD_IN_MAX_WORDS {
        return Some("a heading or a lead-in to what follows, not a claim");
    }
    if keys {
        return None;
    }
    if trimmed.starts_with('#') {
        return Some("a heading, not a claim");
    }
    if lead_in {
        return Some("a heading or a lead-in to what follows, not a claim");
    }
    let words = words_of(trimmed);
    if opens(&words, HOPES).is_some() {
        return Some("a pleasantry, not a claim");
    }
    if let Some(n) = opens(&words, COURTESIES) {
        let negated = words.iter().skip(n).any(|w| NEGATION_WORDS.contains(w));
        let content = ts
            .iter()
            .filter(|t| t.kind != TermKind::Word || !is_pleasantry_word(&t.key))
            .count();
        // The opening's own words are not content ("understand" of "I understand").
        let opening: usize = words.iter().take(n).filter(|w| !is_stop(w)).count();
        if !negated && !success && content.saturating_sub(opening) <= COURTESY_MAX_WORDS {
            return Some("a courtesy, not a claim");
        }
    }
    let main = main_clause(&words);
    if opens(main, INVITATIONS).is_some() {
        return Some("an offer of help, not a claim");
    }
    if let Some(n) = opens(main, OFFERS)
        && main.get(n).is_none_or(|w| !OFFER_EXCEPTIONS.contains(w))
    {
        return Some("an offer or a plan, not a claim about what happened");
    }
    if let Some(n) = opens(main, REQUESTS)
        && main.get(n).is_none_or(|w| !REQUEST_EXCEPTIONS.contains(w))
    {
        return Some("a request to the user, not a claim");
    }
    None
}

fn is_pleasantry_word(stemmed: &str) -> bool {
    PLEASANTRIES
        .iter()
        .any(|p| super::words::stem(p) == stemmed)
}

fn is_stop(w: &str) -> bool {
    super::words::is_stopword(w)
}

/// The words of a lower-case text: letters, digits and apostrophes.
fn words_of(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| !(c.is_alphanumeric() || matches!(c, '\'' | ',' | '_')))
        .flat_map(|w| {
            // A comma ends its word and is a word of its own, so clauses can be found.
            let (head, comma) = match w.strip_suffix(',') {
                Some(h) => (h, true),
                None => (w, false),
            };
            [
                Some(head.trim_matches(',')).filter(|h| !h.is_empty()),
                comma.then_some(","),
            ]
        })
        .flatten()
        .collect()
}

/// How many words of `words` the first phrase of `phrases` that opens it takes.
fn opens(words: &[&str], phrases: &[&str]) -> Option<usize> {
    phrases.iter().find_map(|p| {
        let want: Vec<&str> = p.split(' ').collect();
        (words.len() >= want.len() && words.iter().zip(&want).all(|(a, b)| a == b))
            .then_some(want.len())
    })
}

/// Leading phrases closed by a comma that the main clause follows.
const MARKERS: &[&str] = &[
    "in the meantime",
    "in addition",
    "for now",
    "in the future",
    "that said",
    "for example",
    "as mentioned",
    "as mentioned earlier",
    "in that case",
    "given the circumstances",
];

/// The main clause: after a leading "If …," (or another conditional), and after one word or a
/// known phrase closed by a comma ("However,", "Otherwise,", "In the meantime,", a name the
/// sentence addresses).
fn main_clause<'a, 'w>(words: &'a [&'w str]) -> &'a [&'w str] {
    let mut m = words;
    for _ in 0..4 {
        let comma = m.iter().position(|w| *w == ",");
        let Some(c) = comma else { break };
        let lead = opens(m, CONDITIONS).is_some() || opens(m, MARKERS).is_some_and(|n| n == c);
        if lead || c == 1 {
            m = m.get(c + 1..).unwrap_or(&[]);
        } else {
            break;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_clause_follows_a_condition_and_a_leading_word() {
        let w = words_of("however, if you need help, i can transfer you.");
        assert_eq!(main_clause(&w), ["i", "can", "transfer", "you"]);
        let w = words_of("the flight, which leaves at noon, is full");
        assert_eq!(main_clause(&w).first(), Some(&"the"));
    }

    #[test]
    fn reasons_name_what_the_sentence_is() {
        assert_eq!(
            non_claim("If you need anything else, feel free to ask!"),
            Some("an offer of help, not a claim")
        );
        assert_eq!(
            non_claim("Please hold on."),
            Some("a request to the user, not a claim")
        );
        assert_eq!(non_claim("Please note the fare is final."), None);
        assert_eq!(non_claim("I can see the booking."), None);
        assert_eq!(non_claim("I can offer a $50 certificate."), None);
    }

    #[test]
    fn a_short_lead_in_may_hold_a_number_and_layout_is_never_a_claim() {
        assert!(non_claim("Major Use Cases by 2025:").is_some());
        assert_eq!(
            non_claim("### 1."),
            Some("a heading, not a claim"),
            "a numbered heading holds a number but says nothing"
        );
        assert_eq!(
            non_claim("_abn.ts_"),
            Some("a label in emphasis or code, not a claim")
        );
        // A long sentence ending in a colon with a number is still a claim.
        assert_eq!(
            non_claim("The total of the 3 orders placed in March by this customer is:"),
            None
        );
    }
}

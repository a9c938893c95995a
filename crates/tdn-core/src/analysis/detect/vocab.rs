//! The word lists the rules read: what a success claim, a refusal, an offer, a complaint about a
//! call's input, a "not found" and a plan look like. English only; docs/how-it-decides.md lists
//! them and says where they go wrong. Data and plain matching only.

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

/// Words that make a success word a report about this conversation ("Your call is booked",
/// "I've refunded", "The refund has been issued") rather than a general statement ("Invoices
/// are issued monthly").
pub const ACTION_MARKERS: &[&str] = &[
    "i",
    "i've",
    "i'm",
    "i have",
    "we",
    "we've",
    "we have",
    "your",
    "you",
    "you're",
    "you've",
    "has been",
    "have been",
    "was",
    "were",
    "is now",
    "are now",
    "all set",
    "just",
];

/// First words of a tool name that say the tool changes things (`create_event`, `issueRefund`),
/// used for claims of actions when the run marks no tool `mutates` (imported runs often do not).
pub const ACTION_NAME_WORDS: &[&str] = &[
    "create",
    "book",
    "schedule",
    "reschedule",
    "rebook",
    "send",
    "email",
    "cancel",
    "refund",
    "update",
    "delete",
    "remove",
    "add",
    "pay",
    "charge",
    "transfer",
    "submit",
    "place",
    "reserve",
    "issue",
    "write",
    "save",
    "post",
    "modify",
    "change",
    "set",
    "insert",
    "upsert",
    "put",
    "patch",
    "approve",
    "confirm",
    "order",
    "buy",
    "purchase",
    "ship",
    "register",
    "apply",
    "close",
    "move",
    "assign",
    "grant",
    "revoke",
    "publish",
    "exchange",
    "return",
    "credit",
    "upgrade",
    "downgrade",
    "activate",
    "deactivate",
    "renew",
    "notify",
];

/// Words that turn a claim around ("could not book").
pub const NEGATIONS: &[&str] = &[
    "not", "n't", "never", "no", "unable", "cannot", "failed", "couldn't", "wasn't", "didn't",
    "isn't", "haven't", "hasn't", "won't", "can't", "weren't", "aren't", "don't", "doesn't",
];

/// Words that make a claim a promise or a possibility rather than a report of what happened.
pub const MODALS: &[&str] = &[
    "will", "would", "can", "could", "should", "may", "might", "shall", "going", "'ll", "once",
    "if",
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

/// Openings of a wish or a goodbye ("Enjoy your visit!", "Have a great day!"): a sentence that
/// opens with one of these and holds no number or id is a pleasantry, not a claim.
pub const WISHES: &[&str] = &[
    "enjoy",
    "have a",
    "have an",
    "have fun",
    "take care",
    "safe travels",
    "safe trip",
    "good luck",
    "best of luck",
    "all the best",
    "best wishes",
    "happy",
    "see you",
    "talk soon",
    "stay safe",
    "wishing you",
];

/// Words that, right before an action verb in its base form, say the action did not happen
/// ("could not book", "couldn't cancel", "was unable to refund", "failed to send").
pub const NEGATED_ACTION_LEADS: &[&str] = &["not", "never", "cannot", "unable", "failed", "n't"];

/// Negations that make a statement general rather than a report ("The store does not open on
/// Sundays"): an action verb after these is not a claim about a call.
pub const GENERAL_NEGATIONS: &[&str] = &["does", "do", "doesn't", "don't"];

/// Negated modals that report an inability ("could not", "can't") rather than a promise: they
/// do not make a claim of an action a possibility.
pub const NEGATED_MODALS: &[&str] = &[
    "could not",
    "couldn't",
    "can not",
    "cannot",
    "can't",
    "would not",
    "wouldn't",
];

/// Phrases of an error that reject the request as a whole, or say its values matched nothing:
/// about the arguments even when the error names none of them.
pub const REQUEST_COMPLAINTS: &[&str] = &[
    "bad request",
    "400",
    "422",
    "unprocessable",
    "not found",
    "no such",
    "does not exist",
    "doesn't exist",
    "no match",
    "not recognized",
    "unexpected keyword",
    "unexpected argument",
    "positional argument",
];

/// Phrases of an error that complains about the call's input: the arguments are at fault. An
/// exception raised by code the model wrote (`NameError`, `ValueError`, ...) counts too.
pub const INPUT_COMPLAINTS: &[&str] = &[
    "invalid",
    "missing",
    "required",
    "must be",
    "must not",
    "expected",
    "malformed",
    "not a valid",
    "is not a",
    "bad request",
    "400",
    "422",
    "unprocessable",
    "cannot parse",
    "could not parse",
    "can't parse",
    "unable to parse",
    "parse error",
    "unrecognized",
    "unknown parameter",
    "unknown field",
    "unknown argument",
    "wrong type",
    "wrong format",
    "out of range",
    "too long",
    "too short",
    "not allowed",
    "not found",
    "no such",
    "does not exist",
    "doesn't exist",
    "not recognized",
    "no match",
    "mismatch",
    "could not convert",
    "cannot convert",
    "syntaxerror",
    "nameerror",
    "typeerror",
    "valueerror",
    "keyerror",
    "indexerror",
    "attributeerror",
    "zerodivisionerror",
    "modulenotfounderror",
    "importerror",
    "is not defined",
    "unexpected keyword",
    "unexpected argument",
    "positional argument",
];

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

/// Phrases of an error rejecting the request's content by a business rule ("balance is not
/// enough", "amount exceeds the limit"): about the request when the error also names one of its
/// keys or the kind of one of its values.
pub const REJECTIONS: &[&str] = &[
    "not enough",
    "insufficient",
    "exceeds",
    "exceeded",
    "too many",
    "too few",
    "too high",
    "too low",
    "too large",
    "too small",
    "too long",
    "too short",
    "not available",
    "no longer available",
    "not allowed",
    "not permitted",
    "cannot be",
    "can't be",
    "could not be",
    "not eligible",
    "ineligible",
    "already",
    "over the limit",
    "limit",
    "mismatch",
    "does not match",
    "doesn't match",
    "conflict",
    "duplicate",
    "not supported",
    "unsupported",
    "rejected",
    "declined",
    "not accepted",
    "must",
    "only",
    "invalid",
    "wrong",
];

/// Phrases of an error refusing the request outright by a rule of the service ("this order
/// cannot be changed", "balance is not enough", a rule the request "must" or "should" follow):
/// enough on their own to say the request, not the service, was at fault. Narrower than [`REJECTIONS`], whose generic words
/// ("wrong", "limit") need a key or kind of the request beside them.
pub const REFUSALS: &[&str] = &[
    "cannot be",
    "can't be",
    "can only",
    "not allowed",
    "not permitted",
    "not eligible",
    "ineligible",
    "not enough",
    "insufficient",
    "no longer available",
    "not supported",
    "already",
    "should",
    "must",
];

/// Phrases of an error that says the details given matched nothing.
pub const NOT_FOUND: &[&str] = &[
    "not found",
    "no match",
    "no matching",
    "does not exist",
    "doesn't exist",
    "no such",
    "unknown customer",
    "unknown user",
    "unknown account",
    "no account",
    "no customer",
    "no user",
    "no record",
    "no records",
    "could not find",
    "couldn't find",
    "cannot find",
    "can't find",
    "unable to find",
    "not recognized",
    "did not match",
    "does not match",
    "doesn't match",
    "no results",
];

/// Phrases of a user turning down what was offered.
pub const DECLINES: &[&str] = &[
    "no thanks",
    "no thank you",
    "no, thanks",
    "no, thank you",
    "not interested",
    "i don't want",
    "i do not want",
    "don't want",
    "never mind",
    "nevermind",
    "i'll pass",
    "i will pass",
    "i'd rather not",
    "i would rather not",
    "forget it",
    "that won't work",
    "that doesn't work",
    "doesn't work for me",
    "not acceptable",
    "i decline",
    "decline",
    "no, keep",
    "no, leave",
    "keep it as it is",
    "leave it as it is",
    "i'll keep",
    "i will keep",
    "no need",
    "don't bother",
    "nope",
];

/// Phrases of an agent offering something.
pub const OFFERS: &[&str] = &[
    "would you like",
    "do you want",
    "shall i",
    "should i",
    "i can offer",
    "we can offer",
    "i could",
    "i can ",
    "we could",
    "option",
    "alternatively",
    "instead",
    "how about",
    "would you prefer",
    "are you interested",
    "do you accept",
    "for a fee",
    "would it work",
];

/// Phrases of a closing offer of more help ("Is there anything else I can help you with?"): a
/// question that ends a finished answer and waits for nothing.
pub const CLOSING_OFFERS: &[&str] = &[
    "anything else",
    "something else",
    "anything more",
    "any other",
    "any further",
    "any more questions",
    "further help",
    "further assistance",
    "more help",
    "other questions",
    "help you with today",
];

/// Phrases of a model step proposing a plan (the judge's plan rule).
pub const PLAN_WORDS: &[&str] = &[
    "plan",
    "i will",
    "i'll",
    "next i",
    "next, i",
    "step 1",
    "first,",
    "first i",
    "then i",
    "let's",
    "let me",
    "we should",
    "i should",
    "i am going to",
    "i'm going to",
    "going to",
];

/// Common English words left out of word matching.
pub const STOPWORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "if", "then", "so", "of", "to", "in", "on", "at", "by",
    "for", "with", "from", "as", "is", "are", "was", "were", "be", "been", "being", "am", "it",
    "its", "it's", "this", "that", "these", "those", "there", "here", "i", "me", "my", "we", "our",
    "us", "you", "your", "yours", "he", "she", "him", "her", "his", "they", "them", "their",
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "all", "any", "both",
    "each", "few", "more", "most", "other", "some", "such", "only", "own", "same", "than", "too",
    "very", "just", "also", "has", "have", "had", "having", "do", "does", "did", "doing", "will",
    "would", "can", "could", "should", "shall", "may", "might", "must", "into", "about", "over",
    "under", "again", "up", "down", "out", "off", "now", "yet", "already", "still", "via", "per",
    "i'm", "i've", "i'd", "i'll", "you're", "you've", "you'll", "we're", "we've", "we'll", "let's",
    "get", "got", "gets", "s", "t", "re", "ve", "ll", "d", "m", "not", "no", "yes", "n't", "never",
    "one", "able", "after", "before", "during", "while", "until", "within", "without", "because",
    "since",
];

/// Contractions of a negation: function words, left out of word matching like the stop words.
pub const NEGATION_CONTRACTIONS: &[&str] = &[
    "cannot",
    "can't",
    "couldn't",
    "won't",
    "wouldn't",
    "shouldn't",
    "don't",
    "doesn't",
    "didn't",
    "isn't",
    "aren't",
    "wasn't",
    "weren't",
    "hasn't",
    "haven't",
    "hadn't",
    "mustn't",
];

/// True when `word` (lower case) is a stop word. One look-up in a set built on first use (it
/// is asked for every word of every passage of evidence).
pub fn is_stopword(word: &str) -> bool {
    static SET: std::sync::OnceLock<hashbrown::HashSet<&'static str>> = std::sync::OnceLock::new();
    SET.get_or_init(|| {
        STOPWORDS
            .iter()
            .chain(NEGATION_CONTRACTIONS.iter())
            .copied()
            .collect()
    })
    .contains(word)
}

/// The first phrase of `phrases` found in `haystack` (both compared in lower case; `haystack`
/// must already be lower case). Single words match only as whole words.
pub fn find_phrase<'p>(haystack_lower: &str, phrases: &[&'p str]) -> Option<&'p str> {
    phrases
        .iter()
        .copied()
        .find(|p| contains_words(haystack_lower, p))
}

/// True when `needle` occurs in `haystack` not inside a longer word.
pub fn contains_words(haystack: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(pos) = haystack.get(from..).and_then(|h| h.find(needle)) {
        let start = from + pos;
        let end = start + needle.len();
        let before = haystack.get(..start).and_then(|s| s.chars().next_back());
        let after = haystack.get(end..).and_then(|s| s.chars().next());
        let first = needle.chars().next().is_some_and(char::is_alphanumeric);
        let last = needle
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric);
        let glued = (first && before.is_some_and(char::is_alphanumeric))
            || (last && after.is_some_and(char::is_alphanumeric));
        if !glued {
            return true;
        }
        from = start + needle.chars().next().map_or(1, char::len_utf8);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_match_whole_words_only() {
        assert!(contains_words("your order is booked.", "booked"));
        assert!(!contains_words("unbooked", "booked"));
        assert!(contains_words("error 400: bad", "400"));
        assert!(!contains_words("error 4001", "400"));
        assert_eq!(
            find_phrase("no thanks, i'll keep it", DECLINES),
            Some("no thanks")
        );
        assert_eq!(find_phrase("sounds good", DECLINES), None);
    }
}

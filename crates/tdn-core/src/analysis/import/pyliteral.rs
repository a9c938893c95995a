//! Python literals and reprs as JSON: what Python frameworks write into traces with `str()` or
//! `repr()` where JSON was expected. LangChain and OpenInference record a tool's input as
//! `"{'query': 'x'}"`; smolagents, Agno and the OpenAI Agents SDK export objects as
//! `Message(role='user', content='hi')`.
//!
//! Reads dicts, lists, tuples, sets, strings (quoted, triple-quoted, raw and byte prefixes,
//! adjacent literals joined), integers, floats, `True`, `False`, `None`, bare names (kept as their
//! text) and calls `Name(arg, key=value)`, which become objects `{"__class__": "Name", "key":
//! value, "args": [arg]}`. Anything else (an expression, `<object at 0x..>`, text after the value)
//! is not a literal: `None`. Recursive descent bounded by [`MAX_DEPTH`]; linear in the text; never
//! panics.

use serde_json::{Map, Number, Value};

/// Deeper nesting than this is refused (the value is then not parsed at all).
pub const MAX_DEPTH: usize = 64;

/// The key that names the class of a call (`Message(...)` gives `{"__class__": "Message"}`).
pub const CLASS_KEY: &str = "__class__";

/// The JSON of a Python literal or repr, when the whole text is one.
pub fn parse(text: &str) -> Option<Value> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        at: 0,
        names: true,
    };
    let v = p.value(0)?;
    p.skip_ws();
    (p.at == p.s.len()).then_some(v)
}

/// The literal at the start of `text` and how many bytes it took, text after it allowed. Bare
/// names are refused (in code, `final_answer(result)` names a variable whose value is unknown).
pub fn parse_prefix(text: &str) -> Option<(Value, usize)> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        at: 0,
        names: false,
    };
    let v = p.value(0)?;
    Some((v, p.at))
}

/// True when the text may be a Python literal worth parsing: it starts (after blanks) with a
/// bracket, a quote, or a name directly followed by `(`. Cheap; no parsing.
pub fn looks_like(text: &str) -> bool {
    let t = text.trim_start();
    match t.as_bytes().first() {
        Some(b'{' | b'[' | b'(' | b'\'' | b'"') => true,
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
            let name_end = t
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(t.len());
            t.get(name_end..).is_some_and(|rest| rest.starts_with('('))
        }
        _ => false,
    }
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    at: usize,
    /// Bare names (`Mode.FAST`) are read as their text; off, they make the parse fail.
    names: bool,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_ascii_whitespace() {
                self.at += 1;
            } else {
                break;
            }
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skip_ws();
        match self.peek()? {
            b'{' => self.dict_or_set(depth),
            b'[' => {
                self.at += 1;
                self.sequence(b']', depth).map(Value::Array)
            }
            b'(' => {
                self.at += 1;
                self.tuple(depth)
            }
            b'\'' | b'"' => self.strings(),
            b'-' | b'+' | b'0'..=b'9' | b'.' => self.number(),
            c if c.is_ascii_alphabetic() || c == b'_' => self.name_or_call(depth),
            _ => None,
        }
    }

    /// Items up to `close`, comma separated, a trailing comma allowed.
    fn sequence(&mut self, close: u8, depth: usize) -> Option<Vec<Value>> {
        let mut out = Vec::new();
        loop {
            if self.eat(close) {
                return Some(out);
            }
            out.push(self.value(depth + 1)?);
            if !self.eat(b',') {
                return self.eat(close).then_some(out);
            }
        }
    }

    fn tuple(&mut self, depth: usize) -> Option<Value> {
        if self.eat(b')') {
            return Some(Value::Array(Vec::new()));
        }
        let first = self.value(depth + 1)?;
        if self.eat(b')') {
            // `(x)` is x itself; `(x,)` is a tuple.
            return Some(first);
        }
        if !self.eat(b',') {
            return None;
        }
        let mut rest = self.sequence(b')', depth)?;
        rest.insert(0, first);
        Some(Value::Array(rest))
    }

    fn dict_or_set(&mut self, depth: usize) -> Option<Value> {
        self.at += 1;
        if self.eat(b'}') {
            return Some(Value::Object(Map::new()));
        }
        let first = self.value(depth + 1)?;
        if !self.eat(b':') {
            // A set: `{1, 2}`.
            let mut items = vec![first];
            if self.eat(b'}') {
                return Some(Value::Array(items));
            }
            if !self.eat(b',') {
                return None;
            }
            items.extend(self.sequence(b'}', depth)?);
            return Some(Value::Array(items));
        }
        let mut map = Map::new();
        let mut key = first;
        loop {
            let v = self.value(depth + 1)?;
            map.insert(key_text(key), v);
            if !self.eat(b',') {
                return self.eat(b'}').then_some(Value::Object(map));
            }
            if self.eat(b'}') {
                return Some(Value::Object(map));
            }
            key = self.value(depth + 1)?;
            if !self.eat(b':') {
                return None;
            }
        }
    }

    fn name(&mut self) -> Option<&str> {
        let start = self.at;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' {
                self.at += 1;
            } else {
                break;
            }
        }
        self.text.get(start..self.at).filter(|n| !n.is_empty())
    }

    fn name_or_call(&mut self, depth: usize) -> Option<Value> {
        // A string prefix (r'..', b"..", rb'..'): a name of at most two letters right before a quote.
        let start = self.at;
        let name = self.name()?.to_owned();
        if matches!(self.peek(), Some(b'\'' | b'"'))
            && name.len() <= 2
            && name
                .chars()
                .all(|c| matches!(c, 'r' | 'R' | 'b' | 'B' | 'u' | 'U'))
        {
            self.at = start;
            return self.strings();
        }
        match name.as_str() {
            "True" => return Some(Value::Bool(true)),
            "False" => return Some(Value::Bool(false)),
            "None" => return Some(Value::Null),
            _ => {}
        }
        if self.peek() != Some(b'(') {
            return self.names.then_some(Value::String(name));
        }
        self.at += 1;
        let mut obj = Map::new();
        obj.insert(CLASS_KEY.to_owned(), Value::String(name));
        let mut args = Vec::new();
        loop {
            if self.eat(b')') {
                break;
            }
            self.skip_ws();
            let before = self.at;
            // `key=value`, or a positional value.
            let keyword = match self.peek() {
                Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                    let k = self.name().map(str::to_owned);
                    self.skip_ws();
                    let is_kw = self.peek() == Some(b'=') && self.s.get(self.at + 1) != Some(&b'=');
                    if is_kw {
                        self.at += 1;
                        k
                    } else {
                        self.at = before;
                        None
                    }
                }
                _ => None,
            };
            let v = self.value(depth + 1)?;
            match keyword {
                Some(k) => {
                    obj.insert(k, v);
                }
                None => args.push(v),
            }
            if !self.eat(b',') {
                if self.eat(b')') {
                    break;
                }
                return None;
            }
        }
        if !args.is_empty() {
            obj.insert("args".to_owned(), Value::Array(args));
        }
        Some(Value::Object(obj))
    }

    /// One or more string literals in a row (`'a' "b"` is `"ab"`).
    fn strings(&mut self) -> Option<Value> {
        let mut out = String::new();
        let mut any = false;
        loop {
            self.skip_ws();
            let start = self.at;
            let mut raw = false;
            while let Some(c) = self.peek() {
                match c {
                    b'r' | b'R' => raw = true,
                    b'b' | b'B' | b'u' | b'U' => {}
                    _ => break,
                }
                self.at += 1;
                if self.at - start > 2 {
                    break;
                }
            }
            match self.peek() {
                Some(q @ (b'\'' | b'"')) => {
                    self.string(q, raw, &mut out)?;
                    any = true;
                }
                _ => {
                    self.at = start;
                    return any.then_some(Value::String(out));
                }
            }
        }
    }

    fn string(&mut self, q: u8, raw: bool, out: &mut String) -> Option<()> {
        let triple = self.s.get(self.at..self.at + 3) == Some(&[q, q, q][..]);
        self.at += if triple { 3 } else { 1 };
        let mut chunk_start = self.at;
        loop {
            let c = self.peek()?;
            if c == q {
                let closes = !triple || self.s.get(self.at..self.at + 3) == Some(&[q, q, q][..]);
                if closes {
                    out.push_str(self.text.get(chunk_start..self.at)?);
                    self.at += if triple { 3 } else { 1 };
                    return Some(());
                }
                self.at += 1;
            } else if c == b'\n' && !triple {
                return None;
            } else if c == b'\\' {
                out.push_str(self.text.get(chunk_start..self.at)?);
                self.at += 1;
                let e = self.peek()?;
                if raw {
                    out.push('\\');
                    // The escaped character is kept as written (a raw string keeps both).
                    chunk_start = self.at;
                    self.at += utf8_len(e);
                    continue;
                }
                self.at += 1;
                match e {
                    b'n' => out.push('\n'),
                    b't' => out.push('\t'),
                    b'r' => out.push('\r'),
                    b'0' => out.push('\0'),
                    b'a' => out.push('\u{7}'),
                    b'b' => out.push('\u{8}'),
                    b'f' => out.push('\u{c}'),
                    b'v' => out.push('\u{b}'),
                    b'\n' => {}
                    b'x' => out.push(self.hex(2)?),
                    b'u' => out.push(self.hex(4)?),
                    b'U' => out.push(self.hex(8)?),
                    b'\\' | b'\'' | b'"' => out.push(char::from(e)),
                    other => {
                        // Unknown escapes are kept as written, as Python does.
                        out.push('\\');
                        self.at -= 1;
                        let len = utf8_len(other);
                        out.push_str(self.text.get(self.at..self.at + len)?);
                        self.at += len;
                    }
                }
                chunk_start = self.at;
            } else {
                self.at += utf8_len(c);
            }
        }
    }

    fn hex(&mut self, n: usize) -> Option<char> {
        let digits = self.text.get(self.at..self.at + n)?;
        let code = u32::from_str_radix(digits, 16).ok()?;
        self.at += n;
        Some(char::from_u32(code).unwrap_or('\u{fffd}'))
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.at;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-' | b'+') {
                // A sign only at the start or after an exponent.
                if matches!(c, b'-' | b'+')
                    && self.at != start
                    && !matches!(self.s.get(self.at - 1), Some(b'e' | b'E'))
                {
                    break;
                }
                self.at += 1;
            } else {
                break;
            }
        }
        let text: String = self.text.get(start..self.at)?.replace('_', "");
        if let Ok(i) = text.parse::<i64>() {
            return Some(Value::Number(i.into()));
        }
        if let Ok(u) = text.parse::<u64>() {
            return Some(Value::Number(u.into()));
        }
        let f: f64 = text.parse().ok()?;
        // inf and nan have no JSON form: kept as their text.
        Some(Number::from_f64(f).map_or(Value::String(text), Value::Number))
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

/// A dict key as JSON object key: a string as itself, anything else as its JSON text.
fn key_text(k: Value) -> String {
    match k {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn literals_become_json() {
        assert_eq!(parse("{'query': 'x'}"), Some(json!({"query": "x"})));
        assert_eq!(
            parse("{'a': [1, 2.5, -3], 'b': (True, False, None), \"c\": {}}"),
            Some(json!({"a": [1, 2.5, -3], "b": [true, false, null], "c": {}}))
        );
        assert_eq!(parse("(1,)"), Some(json!([1])));
        assert_eq!(parse("(1)"), Some(json!(1)));
        assert_eq!(parse("()"), Some(json!([])));
        assert_eq!(parse("{1, 2}"), Some(json!([1, 2])));
        assert_eq!(parse("{1: 'one'}"), Some(json!({"1": "one"})));
        assert_eq!(parse("[1, 2,]"), Some(json!([1, 2])));
        assert_eq!(parse("1_000"), Some(json!(1000)));
    }

    #[test]
    fn strings_keep_their_escapes_and_quotes() {
        assert_eq!(parse(r"'it\'s'"), Some(json!("it's")));
        assert_eq!(parse(r#""a\nb\t\x41\u00e9""#), Some(json!("a\nb\tAé")));
        assert_eq!(parse(r"r'a\nb'"), Some(json!("a\\nb")));
        assert_eq!(parse("'''one\n'two'\n'''"), Some(json!("one\n'two'\n")));
        assert_eq!(parse("'ab' \"cd\""), Some(json!("abcd")));
        assert_eq!(parse("'café ☕'"), Some(json!("café ☕")));
        assert_eq!(parse(r"'\d+'"), Some(json!("\\d+")));
        assert_eq!(
            parse("'open\nline'"),
            None,
            "a newline ends no short string"
        );
    }

    #[test]
    fn reprs_become_objects_with_their_class() {
        assert_eq!(
            parse("Message(role='user', content='hi', tool_calls=None)"),
            Some(
                json!({"__class__": "Message", "role": "user", "content": "hi", "tool_calls": null})
            )
        );
        assert_eq!(
            parse("datetime.date(2024, 1, 5)"),
            Some(json!({"__class__": "datetime.date", "args": [2024, 1, 5]}))
        );
        assert_eq!(
            parse("Run(messages=[M(text=\"a\")], mode=Mode.FAST)"),
            Some(
                json!({"__class__": "Run", "messages": [{"__class__": "M", "text": "a"}], "mode": "Mode.FAST"})
            )
        );
    }

    #[test]
    fn what_is_not_a_literal_is_refused() {
        for text in [
            "",
            "{'a': 1",
            "{'a': 1} trailing",
            "<Foo object at 0x7f>",
            "1 + 2",
            "{'a': x == 1}",
            "'unterminated",
            "f(a=)",
        ] {
            assert_eq!(parse(text), None, "{text:?}");
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 5), "]".repeat(MAX_DEPTH + 5));
        assert_eq!(parse(&deep), None);
        let ok = format!("{}{}", "[".repeat(10), "]".repeat(10));
        assert!(parse(&ok).is_some());
    }

    #[test]
    fn a_call_at_the_start_of_code_is_read_up_to_its_closing_parenthesis() {
        let code = "final_answer(\"\"\"Paris (France)\"\"\")\nprint(1)";
        let (v, used) = parse_prefix(code).unwrap_or_default();
        assert_eq!(
            v,
            json!({"__class__": "final_answer", "args": ["Paris (France)"]})
        );
        assert_eq!(code.get(used..), Some("\nprint(1)"));
        assert_eq!(
            parse_prefix("final_answer(result)"),
            None,
            "a variable's value is unknown"
        );
        assert_eq!(
            parse_prefix("final_answer(answer='x')").map(|p| p.0["answer"].clone()),
            Some(json!("x"))
        );
    }

    #[test]
    fn only_bracketed_quoted_or_called_text_looks_like_a_literal() {
        assert!(looks_like(" {'a': 1}"));
        assert!(looks_like("Message(role='user')"));
        assert!(looks_like("'x'"));
        assert!(!looks_like("The answer is (probably) 42"));
        assert!(!looks_like("hello"));
    }
}

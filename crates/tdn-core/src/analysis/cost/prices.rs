//! The price table that turns a model call's tokens into an estimated dollar cost when the trace
//! records none: a small built-in list of common models, which `[prices."model-name"]` in
//! `tdn.toml` overrides or extends. Prices are US dollars per million tokens, as the providers
//! listed them on [`PRICES_AS_OF`] (standard tier, no caching or batch discounts, the lowest
//! context tier); the built-in figures agree with the costs Langfuse records in the real exports
//! the tests read.

/// When the built-in prices were taken (docs/report.md says so too).
pub const PRICES_AS_OF: &str = "2025-11-15";

/// What a model charges, in US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    /// Per million prompt tokens.
    pub input_per_mtok: f64,
    /// Per million completion tokens.
    pub output_per_mtok: f64,
}

impl Price {
    /// The cost of these token counts (an absent count costs nothing).
    pub fn of(&self, input: Option<u64>, output: Option<u64>) -> f64 {
        let part = |n: Option<u64>, per: f64| n.map_or(0.0, |n| n as f64 * per / 1_000_000.0);
        part(input, self.input_per_mtok) + part(output, self.output_per_mtok)
    }
}

/// `(name, input, output)`: a model whose name starts with `name` (then ends, or goes on with
/// `-`, `:`, `@` or `_`, as a date or version does) is priced so; the longest name that fits wins.
const BUILT_IN: &[(&str, f64, f64)] = &[
    // OpenAI
    ("gpt-5", 1.25, 10.0),
    ("gpt-5-mini", 0.25, 2.0),
    ("gpt-5-nano", 0.05, 0.4),
    ("gpt-4.1", 2.0, 8.0),
    ("gpt-4.1-mini", 0.4, 1.6),
    ("gpt-4.1-nano", 0.1, 0.4),
    ("gpt-4o", 2.5, 10.0),
    ("gpt-4o-mini", 0.15, 0.6),
    ("gpt-4-turbo", 10.0, 30.0),
    ("gpt-4", 30.0, 60.0),
    ("gpt-3.5-turbo", 0.5, 1.5),
    ("o1", 15.0, 60.0),
    ("o1-mini", 1.1, 4.4),
    ("o3", 2.0, 8.0),
    ("o3-mini", 1.1, 4.4),
    ("o4-mini", 1.1, 4.4),
    // Anthropic
    ("claude-opus-4", 15.0, 75.0),
    ("claude-opus-4-1", 15.0, 75.0),
    ("claude-opus-4-5", 5.0, 25.0),
    ("claude-sonnet-4", 3.0, 15.0),
    ("claude-sonnet-4-5", 3.0, 15.0),
    ("claude-haiku-4-5", 1.0, 5.0),
    ("claude-3-7-sonnet", 3.0, 15.0),
    ("claude-3-5-sonnet", 3.0, 15.0),
    ("claude-3-5-haiku", 0.8, 4.0),
    ("claude-3-opus", 15.0, 75.0),
    ("claude-3-haiku", 0.25, 1.25),
    // Google
    ("gemini-2.5-pro", 1.25, 10.0),
    ("gemini-2.5-flash", 0.3, 2.5),
    ("gemini-2.5-flash-lite", 0.1, 0.4),
    ("gemini-2.0-flash", 0.1, 0.4),
    ("gemini-2.0-flash-lite", 0.075, 0.3),
    ("gemini-1.5-pro", 1.25, 5.0),
    ("gemini-1.5-flash", 0.075, 0.3),
];

/// The prices in force: the user's (`[prices."name"]`) over the built-in ones.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prices {
    /// The user's entries, names in lower case.
    user: Vec<(String, Price)>,
}

/// Where a price came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Priced {
    /// The table's name that matched (`gpt-4o` for `gpt-4o-2024-08-06`).
    pub name: String,
    /// The price.
    pub price: Price,
    /// From the user's `tdn.toml` rather than the built-in table.
    pub from_config: bool,
}

impl Prices {
    /// The built-in table alone.
    pub const fn built_in() -> Prices {
        Prices { user: Vec::new() }
    }

    /// Adds (or replaces) the user's price of a model name.
    pub fn set(&mut self, name: &str, price: Price) {
        let name = name.trim().to_lowercase();
        self.user.retain(|(n, _)| *n != name);
        self.user.push((name, price));
    }

    /// The user's entries, in the order given.
    pub fn user_entries(&self) -> &[(String, Price)] {
        &self.user
    }

    /// The price of a model as a trace names it (`openai/gpt-4o-2024-08-06`,
    /// `projects/p/locations/l/publishers/google/models/gemini-2.5-flash`,
    /// `anthropic.claude-3-5-sonnet-20241022-v2:0`): the entry whose name fits it longest, the
    /// user's before the built-in one of the same name. `None` when neither knows it.
    pub fn lookup(&self, model: &str) -> Option<Priced> {
        let model = model.trim().to_lowercase();
        if model.is_empty() {
            return None;
        }
        // The name after any path (`openai/`, `.../models/`) and vendor prefix (`anthropic.`).
        let last = model.rsplit('/').next().unwrap_or(&model);
        let starts: Vec<&str> = std::iter::once(last)
            .chain(
                last.match_indices('.')
                    .filter_map(|(i, _)| last.get(i + 1..)),
            )
            .collect();
        let user = self.user.iter().map(|(n, p)| (n.as_str(), *p, true));
        let built_in = BUILT_IN.iter().map(|&(n, i, o)| {
            let price = Price {
                input_per_mtok: i,
                output_per_mtok: o,
            };
            (n, price, false)
        });
        // The longest fitting name wins; on a tie the user's.
        user.chain(built_in)
            .filter(|(n, _, _)| starts.iter().any(|s| fits(s, n)))
            .max_by_key(|(n, _, from_config)| (n.len(), *from_config))
            .map(|(n, price, from_config)| Priced {
                name: n.to_owned(),
                price,
                from_config,
            })
    }
}

/// True when `model` is `name` or `name` followed by a version or date (`-`, `:`, `@`, `_`).
fn fits(model: &str, name: &str) -> bool {
    match model.strip_prefix(name) {
        Some("") => true,
        Some(rest) => rest.starts_with(['-', ':', '@', '_']),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(p: &Prices, model: &str) -> Option<String> {
        p.lookup(model).map(|x| x.name)
    }

    #[test]
    fn names_with_dates_providers_and_vendors_find_their_model() {
        let p = Prices::built_in();
        assert_eq!(name(&p, "gpt-4o-2024-08-06").as_deref(), Some("gpt-4o"));
        assert_eq!(name(&p, "gpt-4o-mini").as_deref(), Some("gpt-4o-mini"));
        assert_eq!(name(&p, "openai/gpt-4o").as_deref(), Some("gpt-4o"));
        assert_eq!(name(&p, "gpt-4.1-2025-04-14").as_deref(), Some("gpt-4.1"));
        assert_eq!(
            name(&p, "GPT-5-mini-2025-08-07").as_deref(),
            Some("gpt-5-mini")
        );
        assert_eq!(
            name(
                &p,
                "projects/p/locations/europe-central2/publishers/google/models/gemini-2.5-flash"
            )
            .as_deref(),
            Some("gemini-2.5-flash")
        );
        assert_eq!(
            name(&p, "anthropic.claude-3-5-sonnet-20241022-v2:0").as_deref(),
            Some("claude-3-5-sonnet")
        );
        assert_eq!(
            name(&p, "claude-sonnet-4-5-20250929").as_deref(),
            Some("claude-sonnet-4-5")
        );
        // A name is not a prefix of another model: gpt-4.5 is not gpt-4, o1x not o1.
        assert_eq!(name(&p, "gpt-4.5-preview"), None);
        assert_eq!(name(&p, "o1x"), None);
        assert_eq!(name(&p, "my-local-llama"), None);
        assert_eq!(name(&p, ""), None);
    }

    #[test]
    fn the_built_in_prices_give_the_costs_langfuse_records() {
        // Langfuse's recorded costs in the real exports: gpt-4o 168 in / 19 out = $0.00061,
        // gemini-2.5-flash 3004 / 167 = $0.0013187, gpt-5-mini 77 / 86 = $0.00019125.
        let p = Prices::built_in();
        let cost = |m: &str, i: u64, o: u64| {
            p.lookup(m)
                .map(|x| x.price.of(Some(i), Some(o)))
                .unwrap_or(f64::NAN)
        };
        assert!((cost("gpt-4o", 168, 19) - 0.00061).abs() < 1e-12);
        assert!((cost("gemini-2.5-flash", 3004, 167) - 0.0013187).abs() < 1e-12);
        assert!((cost("gpt-5-mini-2025-08-07", 77, 86) - 0.00019125).abs() < 1e-12);
    }

    #[test]
    fn the_users_prices_come_first_and_add_models() {
        let mut p = Prices::built_in();
        let cheap = Price {
            input_per_mtok: 1.0,
            output_per_mtok: 2.0,
        };
        p.set("GPT-4o", cheap);
        p.set("my-local-llama", cheap);
        let x = p.lookup("gpt-4o-2024-08-06");
        assert_eq!(x.as_ref().map(|x| x.price), Some(cheap));
        assert!(x.is_some_and(|x| x.from_config));
        assert_eq!(
            name(&p, "my-local-llama-3").as_deref(),
            Some("my-local-llama")
        );
        // gpt-4o-mini is not the user's gpt-4o: the longer built-in name fits it better.
        let mini = p.lookup("gpt-4o-mini");
        assert!(mini.is_some_and(|x| x.name == "gpt-4o-mini" && !x.from_config));
    }
}

//! A small pricebook: micro-USD per million tokens for well-known models. An unknown
//! price yields an unknown cost, never a fake zero.

use std::collections::HashMap;

/// Input and output prices in micro-USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Price {
    /// Per million input tokens.
    pub input_micros_per_mtok: i64,
    /// Per million output tokens.
    pub output_micros_per_mtok: i64,
}

/// Built-in prices by model-name prefix (longest prefix wins).
const BUILT_IN: &[(&str, i64, i64)] = &[
    ("gpt-4o-mini", 150_000, 600_000),
    ("gpt-4o", 2_500_000, 10_000_000),
    ("gpt-4.1-mini", 400_000, 1_600_000),
    ("gpt-4.1", 2_000_000, 8_000_000),
    ("o4-mini", 1_100_000, 4_400_000),
    ("claude-3-5-haiku", 800_000, 4_000_000),
    ("claude-haiku-4", 1_000_000, 5_000_000),
    ("claude-sonnet-4", 3_000_000, 15_000_000),
    ("claude-opus-4", 15_000_000, 75_000_000),
];

/// Prices known to this process: built-ins plus operator overrides keyed by
/// `provider/model` or bare model name.
#[derive(Debug, Clone, Default)]
pub struct Pricebook {
    overrides: HashMap<String, Price>,
}

impl Pricebook {
    /// A pricebook with operator overrides.
    pub fn new(overrides: HashMap<String, Price>) -> Self {
        Self { overrides }
    }

    /// The price of `model` at `provider`, when known.
    pub fn price(&self, provider: &str, model: &str) -> Option<Price> {
        if let Some(p) = self
            .overrides
            .get(&format!("{provider}/{model}"))
            .or_else(|| self.overrides.get(model))
        {
            return Some(*p);
        }
        BUILT_IN
            .iter()
            .filter(|(prefix, _, _)| model.starts_with(prefix))
            .max_by_key(|(prefix, _, _)| prefix.len())
            .map(|&(_, i, o)| Price {
                input_micros_per_mtok: i,
                output_micros_per_mtok: o,
            })
    }

    /// The cost of a call in micro-USD, or `None` when the price is unknown.
    pub fn cost(&self, provider: &str, model: &str, input: u64, output: u64) -> Option<i64> {
        let p = self.price(provider, model)?;
        let micros = (input as i128 * p.input_micros_per_mtok as i128
            + output as i128 * p.output_micros_per_mtok as i128)
            / 1_000_000;
        Some(micros as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_models_cost_and_unknown_models_do_not() {
        let book = Pricebook::default();
        assert_eq!(
            book.cost("openai", "gpt-4o-mini-2024", 1_000_000, 0),
            Some(150_000)
        );
        assert_eq!(book.cost("openai", "gpt-4o", 0, 1_000), Some(10_000));
        assert_eq!(book.cost("local", "fixture-model", 10, 10), None);
        let mut o = HashMap::new();
        o.insert(
            "local/fixture-model".to_string(),
            Price {
                input_micros_per_mtok: 1_000_000,
                output_micros_per_mtok: 2_000_000,
            },
        );
        assert_eq!(
            Pricebook::new(o).cost("local", "fixture-model", 10, 10),
            Some(30)
        );
    }
}

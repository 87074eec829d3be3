//! Token budgets for working memory: a documented estimate of what a message costs
//! and a fill that takes messages newest first while they fit.

use crate::domain::message::Message;

/// Estimated tokens of a message: one per four characters of its text and tool
/// calls (rounded up) plus four for the message's framing. A deliberate
/// over-estimate for English text that needs no tokenizer.
pub fn estimate_tokens(message: &Message) -> usize {
    let chars = message.content.chars().count()
        + message
            .tool_calls
            .iter()
            .map(|c| c.name.chars().count() + c.arguments.chars().count())
            .sum::<usize>();
    4 + chars.div_ceil(4)
}

/// Fills a token budget with messages offered newest first.
#[derive(Debug, Clone, Copy)]
pub struct BudgetFill {
    budget: usize,
    used: usize,
    taken: usize,
}

impl BudgetFill {
    /// An empty fill of `budget` tokens.
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            used: 0,
            taken: 0,
        }
    }

    /// Takes the next-older message if it still fits (the first one always does);
    /// `false` means this and every older message stays out.
    pub fn admit(&mut self, message: &Message) -> bool {
        let cost = estimate_tokens(message);
        if self.taken > 0 && self.used + cost > self.budget {
            return false;
        }
        self.used += cost;
        self.taken += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::message::Role;

    fn msg(text: &str) -> Message {
        Message::unstored(Role::User, text)
    }

    #[test]
    fn estimates_a_quarter_token_per_char_plus_framing() {
        assert_eq!(estimate_tokens(&msg("")), 4);
        assert_eq!(estimate_tokens(&msg("abcd")), 5);
        assert_eq!(estimate_tokens(&msg("abcde")), 6);
    }

    #[test]
    fn budget_stops_at_the_first_message_that_does_not_fit() {
        let mut fill = BudgetFill::new(20);
        assert!(fill.admit(&msg(&"x".repeat(40)))); // 14
        assert!(fill.admit(&msg("abcd"))); // 19
        assert!(!fill.admit(&msg("abcd"))); // 24 > 20
    }

    #[test]
    fn the_newest_message_is_taken_even_over_budget() {
        let mut fill = BudgetFill::new(1);
        assert!(fill.admit(&msg(&"x".repeat(400))));
        assert!(!fill.admit(&msg("")));
    }
}

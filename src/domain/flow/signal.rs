//! Goal-signal matching: a signal matches a message when its words occur in the
//! message, in order and next to each other, as whole words, ignoring case.

/// The words of `text`, lowercased: its maximal runs of letters and digits (any
/// other character, punctuation and apostrophes included, separates words).
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `signal` occurs in a message whose [`words`] are `message`: its own
/// words, in order and contiguous. A signal without words matches nothing.
pub fn signal_matches(signal: &str, message: &[String]) -> bool {
    let wanted = words(signal);
    !wanted.is_empty()
        && message
            .windows(wanted.len())
            .any(|w| w == wanted.as_slice())
}

/// The first of `signals` (in the order given) that matches a message whose
/// [`words`] are `message`.
pub fn first_match<'a>(signals: &'a [String], message: &[String]) -> Option<&'a str> {
    signals
        .iter()
        .find(|s| signal_matches(s, message))
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(signal: &str, message: &str) -> bool {
        signal_matches(signal, &words(message))
    }

    #[test]
    fn a_signal_matches_whole_words_in_any_case() {
        assert!(matches("refund", "I want a REFUND, now!"));
        assert!(matches("Refund", "refund"));
        assert!(
            !matches("refund", "refunds please"),
            "a longer word is another word"
        );
        assert!(!matches("fund", "refund"), "part of a word is not the word");
        assert!(
            matches("Ärger", "so viel ärger"),
            "letters beyond ASCII fold too"
        );
    }

    #[test]
    fn a_phrase_matches_its_words_in_order_and_adjacent() {
        assert!(matches("cancel my order", "Please cancel   my order."));
        assert!(
            matches("e-mail", "my e mail changed"),
            "punctuation separates words"
        );
        assert!(!matches("cancel my order", "my order: cancel it"));
        assert!(!matches(
            "cancel my order",
            "cancel the order I placed, my bad"
        ));
    }

    #[test]
    fn a_signal_without_words_matches_nothing() {
        assert!(!matches("?!", "?! what"));
        assert!(!matches("", "anything"));
        assert_eq!(
            first_match(
                &["nope".into(), "late".into(), "order".into()],
                &words("order is late")
            ),
            Some("late"),
            "the first signal in file order wins, not the first word of the message"
        );
    }
}

//! Session titles: the provisional title an editor thread starts with, the
//! title its first prompt gives it, and the tidying of titles an agent reports.

use crate::domain::session::Session;

/// The title an editor thread has until its first prompt names it.
pub const PROVISIONAL_TITLE: &str = "Editor thread";

/// Longest title kept, in characters; a longer one is cut and ends with `…`.
pub const MAX_TITLE_CHARS: usize = 80;

/// `text` on one line (runs of whitespace, newlines included, become one
/// space), cut to [`MAX_TITLE_CHARS`]; `None` when nothing is left.
pub fn tidy(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        return None;
    }
    let line = words.join(" ");
    if line.chars().count() <= MAX_TITLE_CHARS {
        return Some(line);
    }
    let cut: String = line.chars().take(MAX_TITLE_CHARS - 1).collect();
    Some(format!("{}…", cut.trim_end()))
}

/// The title a prompt gives a thread: its first line that is not blank, tidied.
pub fn from_prompt(prompt: &str) -> Option<String> {
    prompt.lines().find_map(tidy)
}

/// Names `session` after `prompt` when it still has the provisional title;
/// answers whether the title changed.
pub fn name_from_first_prompt(session: &mut Session, prompt: &str) -> bool {
    if session.title != PROVISIONAL_TITLE {
        return false;
    }
    match from_prompt(prompt) {
        Some(title) => {
            session.title = title;
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::SessionId;
    use crate::domain::session::RuntimeKind;

    #[test]
    fn the_first_line_that_is_not_blank_names_the_thread() {
        assert_eq!(
            from_prompt("\n  \n  Fix   the login\tbug \nand more").as_deref(),
            Some("Fix the login bug")
        );
        assert_eq!(from_prompt(" \n\t"), None);
        let long = "word ".repeat(40);
        let title = from_prompt(&long).expect("a title");
        assert_eq!(title.chars().count(), MAX_TITLE_CHARS);
        assert!(title.ends_with('…') && !title.ends_with(" …"), "{title}");
    }

    #[test]
    fn only_a_provisional_title_is_replaced() {
        let mut s = Session::new_idle(
            "ns",
            SessionId::from("s"),
            PROVISIONAL_TITLE,
            RuntimeKind::Model,
        );
        assert!(!name_from_first_prompt(&mut s, "   "));
        assert_eq!(s.title, PROVISIONAL_TITLE);
        assert!(name_from_first_prompt(&mut s, "Refactor the parser"));
        assert_eq!(s.title, "Refactor the parser");
        assert!(!name_from_first_prompt(&mut s, "Something else"));
        assert_eq!(s.title, "Refactor the parser");
    }
}

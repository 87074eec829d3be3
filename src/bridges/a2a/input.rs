//! What a client's message says: the prompt of a new task (its text and data
//! parts), the answer to a pending approval (text such as "approve" / "reject",
//! or a data part `{"decision": …, "scope": …}`), and the workspace a new
//! conversation works in (`metadata.workspace`).

use super::error::A2aError;
use crate::a2a_wire::{Message, Part, Role};
use crate::domain::approval::{Decision, Scope};
use serde_json::{Map, Value};

/// An answer to a pending approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalAnswer {
    /// Approve or reject.
    pub decision: Decision,
    /// How far it reaches (`once` unless the client says).
    pub scope: Scope,
}

/// Refuses a message that is not the client's.
pub fn check_role(message: &Message) -> Result<(), A2aError> {
    match message.role {
        Role::User => Ok(()),
        other => Err(A2aError::InvalidParams(format!(
            "the message's role is {}; a client sends ROLE_USER",
            serde_json::to_string(&other).unwrap_or_default()
        ))),
    }
}

/// The prompt of a new task: its text parts, and its data parts as JSON, one
/// per line. Files are refused.
pub fn prompt_text(parts: &[Part]) -> Result<String, A2aError> {
    let mut lines = Vec::new();
    for part in parts {
        if let Some(t) = &part.text {
            lines.push(t.clone());
        } else if let Some(d) = &part.data {
            lines.push(d.to_string());
        } else if part.raw.is_some() || part.url.is_some() {
            return Err(A2aError::ContentTypeNotSupported(format!(
                "file parts ({}) are not accepted; send text or data parts",
                part.media_type.as_deref().unwrap_or("no media type")
            )));
        }
    }
    let text = lines.join("\n");
    if text.trim().is_empty() {
        return Err(A2aError::InvalidParams(
            "the message has no text: send at least one non-empty text or data part".into(),
        ));
    }
    Ok(text)
}

/// The answer a message gives to a pending approval.
pub fn approval_answer(parts: &[Part]) -> Result<ApprovalAnswer, A2aError> {
    for part in parts {
        if let Some(Value::Object(data)) = &part.data
            && let Some(answer) = from_data(data)?
        {
            return Ok(answer);
        }
        if let Some(decision) = part.text.as_deref().and_then(from_text) {
            return Ok(ApprovalAnswer {
                decision,
                scope: Scope::Once,
            });
        }
    }
    Err(A2aError::InvalidParams(
        "the task is waiting for an approval: answer with the text \"approve\" or \"reject\", \
         or a data part {\"decision\": \"approve\"|\"reject\", \"scope\": \"once\"|\"session\"}"
            .into(),
    ))
}

/// The workspace named by the message's or the request's metadata.
pub fn workspace(message: &Message, request: Option<&Map<String, Value>>) -> Option<String> {
    [message.metadata.as_ref(), request]
        .into_iter()
        .flatten()
        .find_map(|m| m.get("workspace").and_then(Value::as_str))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
}

/// A decision in words.
fn from_text(text: &str) -> Option<Decision> {
    let word = text
        .trim()
        .trim_end_matches(['.', '!'])
        .to_ascii_lowercase();
    match word.as_str() {
        "approve" | "approved" | "allow" | "yes" | "y" | "ok" => Some(Decision::Approve),
        "reject" | "rejected" | "deny" | "no" | "n" => Some(Decision::Reject),
        _ => None,
    }
}

/// A decision in a data part; `None` when the part names none.
fn from_data(data: &Map<String, Value>) -> Result<Option<ApprovalAnswer>, A2aError> {
    let Some(word) = data
        .get("decision")
        .or_else(|| data.get("option"))
        .and_then(Value::as_str)
    else {
        return Ok(None);
    };
    let decision = from_text(word).ok_or_else(|| {
        A2aError::InvalidParams(format!(
            "decision {word:?} is neither \"approve\" nor \"reject\""
        ))
    })?;
    let scope = match data.get("scope").and_then(Value::as_str) {
        None | Some("once") => Scope::Once,
        Some(s) => Scope::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                A2aError::InvalidParams(format!(
                    "scope {s:?} is not one of once, session, workspace_tool, adapter_tool"
                ))
            })?,
    };
    Ok(Some(ApprovalAnswer { decision, scope }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_prompt_joins_text_and_data_and_refuses_files_and_emptiness() {
        let parts = [Part::text("hello"), Part::data(json!({"k": 1}))];
        assert_eq!(prompt_text(&parts).expect("text"), "hello\n{\"k\":1}");
        let file = Part {
            url: Some("https://x/y.png".into()),
            ..Part::default()
        };
        assert_eq!(prompt_text(&[file]).expect_err("file").code(), -32005);
        assert_eq!(
            prompt_text(&[Part::text("  ")]).expect_err("empty").code(),
            -32602
        );
    }

    #[test]
    fn approvals_are_answered_in_words_or_data() {
        let yes = approval_answer(&[Part::text("Approve.")]).expect("approve");
        assert_eq!((yes.decision, yes.scope), (Decision::Approve, Scope::Once));
        let no = approval_answer(&[Part::text("reject")]).expect("reject");
        assert_eq!(no.decision, Decision::Reject);
        let wide = approval_answer(&[Part::data(
            json!({"decision": "approve", "scope": "session"}),
        )])
        .expect("data");
        assert_eq!(wide.scope, Scope::Session);
        assert!(approval_answer(&[Part::text("maybe later")]).is_err());
        let bad = approval_answer(&[Part::data(json!({"decision": "perhaps"}))]);
        assert_eq!(bad.expect_err("bad decision").code(), -32602);
        let bad_scope =
            approval_answer(&[Part::data(json!({"decision": "approve", "scope": "all"}))]);
        assert!(bad_scope.is_err());
    }

    #[test]
    fn only_user_messages_are_taken() {
        let m: Message = serde_json::from_value(json!({
            "messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}],
            "metadata": {"workspace": "/w"}
        }))
        .expect("message");
        assert_eq!(check_role(&m).expect_err("agent role").code(), -32602);
        assert_eq!(workspace(&m, None).as_deref(), Some("/w"));
    }
}

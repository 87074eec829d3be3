//! Re-routing on `sendChatMessage`: a chat whose model said it drifted off track,
//! or that sits in a fallback conversation, follows the user's message to the
//! conversation whose goal signals it matches; a drifting chat that matches none
//! moves to its fallback conversation.

use super::chat::FlowPosition;
use super::model::AgentFlow;
use super::signal::{first_match, words};

/// Why a chat was re-routed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RerouteCause {
    /// The user's message matched this goal signal (as written in the flow file).
    GoalSignal(String),
    /// The chat drifted and the message matched no goal signal.
    Fallback,
}

impl RerouteCause {
    /// The stable name: `goal_signal` or `fallback`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::GoalSignal(_) => "goal_signal",
            Self::Fallback => "fallback",
        }
    }
}

/// A move of a chat to another conversation's start stage, decided before the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reroute {
    /// The conversation the chat was in.
    pub from_conversation: String,
    /// The stage the chat was in.
    pub from_stage: String,
    /// The conversation it moves to.
    pub conversation: String,
    /// That conversation's start stage.
    pub stage: String,
    /// Why it moves.
    pub cause: RerouteCause,
}

impl Reroute {
    /// The route history entry of the move: `conversation/stage` followed by the
    /// cause, `(goal signal "refund")` or `(fallback)`.
    pub fn route_entry(&self) -> String {
        let why = match &self.cause {
            RerouteCause::GoalSignal(s) => format!("goal signal \"{s}\""),
            RerouteCause::Fallback => "fallback".to_string(),
        };
        format!("{}/{} ({why})", self.conversation, self.stage)
    }

    /// `position` after the move: at the new stage, back on track, with the move
    /// appended to the route.
    pub fn moved(&self, flow: &AgentFlow, position: &FlowPosition) -> FlowPosition {
        let mut route = position.route.clone();
        route.push(self.route_entry());
        FlowPosition {
            conversation: self.conversation.clone(),
            stage: self.stage.clone(),
            ended: flow
                .stage(&self.conversation, &self.stage)
                .is_some_and(|s| s.end),
            on_track: true,
            off_track_reason: None,
            route,
        }
    }
}

/// Where a chat at `position` of `flow` moves before the turn that answers
/// `user_message`, if anywhere. Only a drifting chat (`on_track` false) or one in
/// a fallback conversation is re-routed: to the first other non-fallback
/// conversation (in file order) with a matching goal signal, unless its own
/// non-fallback conversation matches (it stays); else a drifting chat outside
/// the fallback conversations moves to [`AgentFlow::fallback_for`] its conversation.
pub fn reroute(flow: &AgentFlow, position: &FlowPosition, user_message: &str) -> Option<Reroute> {
    let current = flow.conversation(&position.conversation)?;
    let drifting = !position.on_track;
    if !drifting && !current.is_fallback {
        return None;
    }
    let message = words(user_message);
    if !current.is_fallback && first_match(&current.goal_signals, &message).is_some() {
        return None;
    }
    let to = |conversation: &str, stage: &str, cause| Reroute {
        from_conversation: position.conversation.clone(),
        from_stage: position.stage.clone(),
        conversation: conversation.to_string(),
        stage: stage.to_string(),
        cause,
    };
    for c in &flow.conversations {
        if c.is_fallback || c.name == current.name {
            continue;
        }
        if let (Some(signal), Some(start)) =
            (first_match(&c.goal_signals, &message), c.start_stage())
        {
            return Some(to(
                &c.name,
                &start.name,
                RerouteCause::GoalSignal(signal.to_string()),
            ));
        }
    }
    if !drifting || current.is_fallback {
        return None;
    }
    let fallback = flow.fallback_for(current)?;
    let start = fallback.start_stage()?;
    Some(to(&fallback.name, &start.name, RerouteCause::Fallback))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::flow::parse_flow;
    use std::path::Path;

    const SHOP: &str = include_str!("../../../docs/examples/flows/shop.toml");

    fn shop() -> AgentFlow {
        parse_flow("shop", Path::new("flows/shop.toml"), SHOP).expect("the example parses")
    }

    fn at(conversation: &str, stage: &str, on_track: bool) -> FlowPosition {
        FlowPosition {
            conversation: conversation.into(),
            stage: stage.into(),
            ended: false,
            on_track,
            off_track_reason: (!on_track).then(|| "chit-chat".into()),
            route: vec!["orders/number".into()],
        }
    }

    /// Where `message` moves a chat at `position`: (conversation, stage, cause name).
    fn moves(position: &FlowPosition, message: &str) -> Option<(String, String, &'static str)> {
        reroute(&shop(), position, message).map(|r| (r.conversation, r.stage, r.cause.as_str()))
    }

    fn to(
        conversation: &str,
        stage: &str,
        cause: &'static str,
    ) -> Option<(String, String, &'static str)> {
        Some((conversation.into(), stage.into(), cause))
    }

    #[test]
    fn an_on_track_chat_outside_a_fallback_never_moves() {
        assert_eq!(
            moves(&at("orders", "number", true), "I want a refund"),
            None
        );
    }

    #[test]
    fn a_drifting_chat_follows_a_goal_signal_to_that_conversations_start() {
        let r = reroute(
            &shop(),
            &at("orders", "number", false),
            "Can I get my MONEY back?",
        )
        .expect("moves");
        assert_eq!(
            (r.conversation.as_str(), r.stage.as_str()),
            ("refunds", "reason")
        );
        assert_eq!(r.cause, RerouteCause::GoalSignal("money back".into()));
        assert_eq!(
            (r.from_conversation.as_str(), r.from_stage.as_str()),
            ("orders", "number")
        );
        assert_eq!(
            r.route_entry(),
            "refunds/reason (goal signal \"money back\")"
        );
    }

    #[test]
    fn a_drifting_chat_that_matches_nothing_goes_to_the_fallback() {
        assert_eq!(
            moves(&at("refunds", "reason", false), "lovely weather"),
            to("help", "triage", "fallback")
        );
        assert_eq!(
            moves(&at("refunds", "reason", false), "refunds are silly"),
            to("help", "triage", "fallback"),
            "`refunds` is not the signal `refund`"
        );
    }

    #[test]
    fn a_drifting_chat_that_matches_its_own_conversation_stays() {
        assert_eq!(
            moves(&at("refunds", "reason", false), "about that refund"),
            None
        );
    }

    #[test]
    fn a_chat_in_the_fallback_leaves_by_goal_signal_and_otherwise_stays() {
        assert_eq!(
            moves(&at("help", "triage", true), "where is my order?"),
            to("orders", "number", "goal_signal")
        );
        assert_eq!(moves(&at("help", "triage", true), "hmm"), None);
        assert_eq!(
            moves(&at("help", "triage", false), "hmm"),
            None,
            "a drifting chat already in the fallback stays there"
        );
    }

    #[test]
    fn the_first_conversation_in_file_order_wins_when_several_match() {
        assert_eq!(
            moves(&at("help", "triage", true), "refund the delivery"),
            to("orders", "number", "goal_signal")
        );
    }

    #[test]
    fn a_move_puts_the_chat_back_on_track_and_records_it_in_the_route() {
        let flow = shop();
        let from = at("orders", "number", false);
        let r = reroute(&flow, &from, "nice weather").expect("moves");
        let p = r.moved(&flow, &from);
        assert_eq!(
            (p.conversation.as_str(), p.stage.as_str()),
            ("help", "triage")
        );
        assert!(p.on_track && p.off_track_reason.is_none() && !p.ended);
        assert_eq!(p.route, ["orders/number", "help/triage (fallback)"]);
    }

    #[test]
    fn a_flow_without_fallback_moves_only_by_goal_signal() {
        let (head, _help) = SHOP
            .split_once("[[conversations]]\nname = \"help\"")
            .expect("the example has a help conversation");
        let text = head.replace("fallback = \"help\"", "");
        let flow = parse_flow("shop", Path::new("shop.toml"), &text).expect("loads");
        assert_eq!(
            reroute(&flow, &at("orders", "number", false), "nice weather"),
            None
        );
    }
}

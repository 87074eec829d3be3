//! The checks a flow passes on load: unique names, known field types, edges that
//! name stages and conversations that exist, conditions on declared fields, and
//! every stage able to reach an end (no cycle without a way out), and the
//! re-routing settings (`reroute_rules.rs`).

use super::error::FlowError;
use super::model::{AgentFlow, Conversation, FieldType};
use super::reroute_rules::check_rerouting;
use crate::domain::memory::MAX_SUMMARY_SETTING;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

/// A stage of the agent: (conversation, stage).
type Node = (String, String);

/// Checks `flow` (read from `file`), answering the first problem found.
pub fn validate(flow: &AgentFlow, file: &Path) -> Result<(), FlowError> {
    let err = |field: String, message: String| FlowError::new(file, field, message);
    if flow.conversations.is_empty() {
        return Err(err(
            "conversations".into(),
            "a flow needs at least one conversation".into(),
        ));
    }
    let mut names = HashSet::new();
    for (i, c) in flow.conversations.iter().enumerate() {
        if c.name.trim().is_empty() {
            return Err(err(format!("conversations[{i}].name"), "is empty".into()));
        }
        if !names.insert(c.name.as_str()) {
            return Err(err(
                format!("conversations[{}].name", c.name),
                format!("duplicate conversation name `{}`", c.name),
            ));
        }
    }
    if let Some(n) = flow.summarize_every
        && !(1..=MAX_SUMMARY_SETTING).contains(&n)
    {
        return Err(err(
            "summarize_every".into(),
            format!("must be 1 to {MAX_SUMMARY_SETTING}, got {n}"),
        ));
    }
    if flow.conversation(&flow.welcome).is_none() {
        return Err(err(
            "welcome".into(),
            format!("no conversation is named `{}`", flow.welcome),
        ));
    }
    for c in &flow.conversations {
        validate_conversation(flow, c, file)?;
    }
    check_rerouting(flow, file)?;
    ends_are_reachable(flow, file)
}

fn validate_conversation(flow: &AgentFlow, c: &Conversation, file: &Path) -> Result<(), FlowError> {
    let at = format!("conversations[{}]", c.name);
    let err = |field: String, message: String| FlowError::new(file, field, message);
    if c.stages.is_empty() {
        return Err(err(
            format!("{at}.stages"),
            "a conversation needs at least one stage".into(),
        ));
    }
    let mut stages = HashSet::new();
    let mut fields = BTreeSet::new();
    for (i, s) in c.stages.iter().enumerate() {
        if s.name.trim().is_empty() {
            return Err(err(format!("{at}.stages[{i}].name"), "is empty".into()));
        }
        if !stages.insert(s.name.as_str()) {
            return Err(err(
                format!("{at}.stages[{}].name", s.name),
                format!("duplicate stage name `{}`", s.name),
            ));
        }
        let mut own = HashSet::new();
        for f in &s.fields {
            let fat = format!("{at}.stages[{}].fields[{}]", s.name, f.name);
            if f.name.trim().is_empty() {
                return Err(err(format!("{fat}.name"), "is empty".into()));
            }
            if !own.insert(f.name.as_str()) {
                return Err(err(fat, format!("duplicate field name `{}`", f.name)));
            }
            let Some(kind) = FieldType::parse(&f.kind) else {
                return Err(err(
                    format!("{fat}.type"),
                    format!(
                        "unknown field type `{}`; expected one of {}",
                        f.kind,
                        FieldType::NAMES.join(", ")
                    ),
                ));
            };
            if kind == FieldType::Enum && f.values.is_empty() {
                return Err(err(
                    format!("{fat}.values"),
                    "an enum field needs values".into(),
                ));
            }
            if kind != FieldType::Enum && !f.values.is_empty() {
                return Err(err(
                    format!("{fat}.values"),
                    "only enum fields take values".into(),
                ));
            }
            fields.insert(f.name.clone());
        }
    }
    if let Some(start) = &c.start
        && !stages.contains(start.as_str())
    {
        return Err(err(
            format!("{at}.start"),
            format!("no stage is named `{start}`"),
        ));
    }
    for (i, e) in c.edges.iter().enumerate() {
        let eat = format!("{at}.edges[{i}]");
        if !stages.contains(e.from.as_str()) {
            return Err(err(
                format!("{eat}.from"),
                format!("no stage is named `{}`", e.from),
            ));
        }
        match (&e.to, &e.to_conversation) {
            (Some(to), None) if !stages.contains(to.as_str()) => {
                return Err(err(
                    format!("{eat}.to"),
                    format!("no stage is named `{to}`"),
                ));
            }
            (None, Some(to)) if flow.conversation(to).is_none() => {
                return Err(err(
                    format!("{eat}.to_conversation"),
                    format!("no conversation is named `{to}`"),
                ));
            }
            (Some(_), Some(_)) | (None, None) => {
                return Err(err(
                    eat,
                    "an edge needs exactly one of `to` and `to_conversation`".into(),
                ));
            }
            _ => {}
        }
        for name in e.when.filled.iter().chain(e.when.equals.keys()) {
            if !fields.contains(name) {
                return Err(err(
                    format!("{eat}.when"),
                    format!("`{name}` is not a field of any stage of this conversation"),
                ));
            }
        }
    }
    Ok(())
}

/// Every stage must reach a stage marked `end` (through stages, hand-offs and,
/// from a fallback conversation, goal signals); a stage that cannot is reported
/// with the cycle that traps it.
fn ends_are_reachable(flow: &AgentFlow, file: &Path) -> Result<(), FlowError> {
    let mut next: BTreeMap<Node, Vec<Node>> = BTreeMap::new();
    let mut ends = BTreeSet::new();
    let signalled: Vec<Node> = flow
        .conversations
        .iter()
        .filter(|c| !c.is_fallback && !c.goal_signals.is_empty())
        .filter_map(|c| Some((c.name.clone(), c.start_stage()?.name.clone())))
        .collect();
    for c in &flow.conversations {
        for s in &c.stages {
            let node = (c.name.clone(), s.name.clone());
            if s.end {
                ends.insert(node.clone());
            }
            let mut targets: Vec<Node> = c
                .edges_from(&s.name)
                .filter_map(|e| match (&e.to, &e.to_conversation) {
                    (Some(to), _) => Some((c.name.clone(), to.clone())),
                    (None, Some(other)) => {
                        let start = flow.conversation(other)?.start_stage()?;
                        Some((other.clone(), start.name.clone()))
                    }
                    (None, None) => None,
                })
                .collect();
            if c.is_fallback {
                targets.extend(signalled.iter().cloned());
            }
            next.insert(node, targets);
        }
    }
    let mut good = ends.clone();
    loop {
        let before = good.len();
        for (node, targets) in &next {
            if !good.contains(node) && targets.iter().any(|t| good.contains(t)) {
                good.insert(node.clone());
            }
        }
        if good.len() == before {
            break;
        }
    }
    let Some(stuck) = next.keys().find(|n| !good.contains(*n)) else {
        return Ok(());
    };
    let field = format!("conversations[{}].stages[{}]", stuck.0, stuck.1);
    let message = match cycle_from(stuck, &next) {
        Some(cycle) => format!(
            "stage `{}` cannot reach an end stage: the cycle {} has no way out to a stage with `end = true`",
            stuck.1,
            cycle
                .iter()
                .map(|n| n.1.as_str())
                .collect::<Vec<_>>()
                .join(" -> ")
        ),
        None => format!(
            "stage `{}` cannot reach an end stage: add an edge toward a stage with `end = true`",
            stuck.1
        ),
    };
    Err(FlowError::new(file, field, message))
}

/// A cycle reachable from `start`, as the list of its stages ending where it began.
fn cycle_from(start: &Node, next: &BTreeMap<Node, Vec<Node>>) -> Option<Vec<Node>> {
    fn walk(
        n: &Node,
        next: &BTreeMap<Node, Vec<Node>>,
        path: &mut Vec<Node>,
        seen: &mut HashSet<Node>,
    ) -> Option<Vec<Node>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut cycle = path[i..].to_vec();
            cycle.push(n.clone());
            return Some(cycle);
        }
        if !seen.insert(n.clone()) {
            return None;
        }
        path.push(n.clone());
        for t in next.get(n).into_iter().flatten() {
            if let Some(c) = walk(t, next, path, seen) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    walk(start, next, &mut Vec::new(), &mut HashSet::new())
}

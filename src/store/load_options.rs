//! `LoadOptions`: which of a session's messages a read answers: a page on one
//! side of a sequence, at most a limit, of some roles only when asked.

use crate::domain::message::Role;

/// Which side of a sequence a read of a session's messages looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageCursor {
    /// The oldest messages with sequence above this one (`None`: from the start).
    After(Option<i64>),
    /// The newest messages with sequence below this one (`None`: up to the end).
    Before(Option<i64>),
}

/// Which messages of a session a read answers, always in sequence order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadOptions {
    /// Where the read starts.
    pub cursor: MessageCursor,
    /// At most this many messages.
    pub limit: usize,
    /// Only messages of these roles; empty for every role.
    pub roles: Vec<Role>,
}

impl LoadOptions {
    /// Up to `limit` messages of any role after `after` (from the start when `None`).
    pub fn after(after: Option<i64>, limit: usize) -> Self {
        Self {
            cursor: MessageCursor::After(after),
            limit,
            roles: Vec::new(),
        }
    }

    /// Up to `limit` messages of any role before `before` (the newest when `None`).
    pub fn before(before: Option<i64>, limit: usize) -> Self {
        Self {
            cursor: MessageCursor::Before(before),
            limit,
            roles: Vec::new(),
        }
    }

    /// The same read, of `roles` only (every role when empty).
    pub fn with_roles(mut self, roles: Vec<Role>) -> Self {
        self.roles = roles;
        self
    }

    /// The role names the read keeps, for a backend's `IN` or `ANY` filter.
    pub fn role_names(&self) -> Vec<&'static str> {
        self.roles.iter().map(|r| r.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_read_every_role_until_roles_are_named() {
        let o = LoadOptions::before(Some(5), 10);
        assert_eq!(o.cursor, MessageCursor::Before(Some(5)));
        assert!(o.roles.is_empty());
        let o = LoadOptions::after(None, 3).with_roles(vec![Role::User, Role::Tool]);
        assert_eq!(o.cursor, MessageCursor::After(None));
        assert_eq!(o.limit, 3);
        assert_eq!(o.role_names(), ["user", "tool"]);
    }
}

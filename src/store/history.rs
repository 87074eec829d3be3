//! History loading: what part of a stored transcript a runtime sees, by the
//! session's working-memory strategy (`domain::memory`). Each strategy reads only
//! what it needs from the store instead of loading everything.

use crate::domain::error::Result;
use crate::domain::ids::SessionId;
use crate::domain::message::Message;
use crate::store::MessageStore;

pub use crate::domain::budget::BudgetFill;
pub use crate::domain::memory::{
    DEFAULT_MAX_MESSAGES, DEFAULT_SUMMARIZE_EVERY, HistoryParts, HistoryStrategy,
};

/// How many messages a token-budget load reads first; each later read doubles it.
pub const BUDGET_PAGE: usize = 64;

/// The newest messages that fit a token budget, gathered from pages a backend
/// reads backwards from the end of a transcript, `BUDGET_PAGE` at a time.
pub struct BudgetPages {
    fill: BudgetFill,
    newest_first: Vec<Message>,
}

impl BudgetPages {
    /// Nothing gathered yet under a budget of `max_tokens`.
    pub fn new(max_tokens: usize) -> Self {
        Self {
            fill: BudgetFill::new(max_tokens),
            newest_first: Vec::new(),
        }
    }

    /// The sequence the next page must end before (`None`: the transcript's end).
    pub fn next_before(&self) -> Option<i64> {
        self.newest_first.last().map(|m| m.sequence)
    }

    /// Takes one page (newest first, at most `BUDGET_PAGE` long); answers the
    /// gathered messages in sequence order once the budget is full or the page
    /// reached the transcript's start.
    pub fn offer(&mut self, page: Vec<Message>) -> Option<Vec<Message>> {
        let full = page.len() == BUDGET_PAGE;
        for m in page {
            if !self.fill.admit(&m) {
                return Some(self.finish());
            }
            self.newest_first.push(m);
        }
        (!full).then(|| self.finish())
    }

    fn finish(&mut self) -> Vec<Message> {
        let mut out = std::mem::take(&mut self.newest_first);
        out.reverse();
        out
    }
}

impl HistoryStrategy {
    /// Loads the messages this strategy gives a runtime, in sequence order, through
    /// the store's message reads (the backends do the same inside `begin_turn`).
    pub async fn load(
        &self,
        store: &dyn MessageStore,
        session: &SessionId,
    ) -> Result<Vec<Message>> {
        match *self {
            HistoryStrategy::BufferWindow { window } => store.last_messages(session, window).await,
            HistoryStrategy::SummaryBuffer { max_messages, .. } => {
                match store.last_summary_sequence(session).await? {
                    Some(seq) => {
                        store
                            .list_messages(session, Some(seq - 1), usize::MAX)
                            .await
                    }
                    None => store.last_messages(session, max_messages).await,
                }
            }
            HistoryStrategy::TokenBudget { max_tokens } => {
                // Pages grow by `BUDGET_PAGE` from the end; each holds the previous one,
                // so only the unseen older part of a page is offered to the budget.
                let mut fill = BudgetFill::new(max_tokens);
                let mut seen = 0;
                loop {
                    let want = (seen * 2).max(BUDGET_PAGE);
                    let page = store.last_messages(session, want).await?;
                    let older = page.len() - seen.min(page.len());
                    for (i, m) in page[..older].iter().enumerate().rev() {
                        if !fill.admit(m) {
                            return Ok(page[i + 1..].to_vec());
                        }
                    }
                    if page.len() < want {
                        return Ok(page);
                    }
                    seen = page.len();
                }
            }
        }
    }
}

//! History loading: what part of a stored transcript a runtime sees, by the
//! session's working-memory strategy (`domain::memory`). Each strategy reads only
//! what it needs from the store instead of loading everything.

use crate::domain::error::Result;
use crate::domain::ids::SessionId;
use crate::domain::message::Message;
use crate::store::MessageStore;

pub use crate::domain::budget::BudgetFill;
pub use crate::domain::memory::{
    HistoryStrategy, SUMMARIZE_EVERY, SUMMARY_SAFETY_LIMIT, summarization_needed,
};

/// How many messages a token-budget load reads first; each later read doubles it.
pub const BUDGET_PAGE: usize = 64;

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
            HistoryStrategy::SummaryBuffer => match store.last_summary_sequence(session).await? {
                Some(seq) => {
                    store
                        .list_messages(session, Some(seq - 1), usize::MAX)
                        .await
                }
                None => store.last_messages(session, SUMMARY_SAFETY_LIMIT).await,
            },
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

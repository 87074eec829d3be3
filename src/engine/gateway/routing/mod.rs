//! Which provider answers a request and whether it may: the route and its
//! candidates (`route.rs`), the routing settings and their deny and budget
//! rules (`policy.rs`), per-provider cooldowns and the circuit breaker
//! (`health.rs`), today's spend (`budget.rs`, `spend.rs`), cooldowns shared
//! through the store (`sync.rs`), and the local `/v1` rate limit (`limit.rs`).

pub mod budget;
pub mod health;
pub mod limit;
pub mod policy;
pub mod route;
pub(super) mod spend;
pub mod sync;

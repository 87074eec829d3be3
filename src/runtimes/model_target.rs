//! A resolved model: the provider and the model as that provider names it.

/// A resolved `provider/model` pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelTarget {
    /// Provider name.
    pub provider: String,
    /// Model name.
    pub model: String,
}

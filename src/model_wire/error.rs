//! Why a client's request cannot be forwarded as it is.

/// A request the gateway refuses before calling a provider.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranslateError {
    /// The body is not the shape the wire format requires (a missing or mistyped field).
    #[error("{0}")]
    Invalid(String),
    /// The body asks for something the other wire format cannot express.
    #[error("{0}")]
    Unsupported(String),
}

impl TranslateError {
    /// The request field at fault, for OpenAI's `error.param`: the first name
    /// the reason quotes in backticks (every reason names its field that way,
    /// e.g. `` `input[0].type` ``).
    pub fn param(&self) -> Option<String> {
        let (Self::Invalid(m) | Self::Unsupported(m)) = self;
        let rest = m.split_once('`')?.1;
        let name = rest.split_once('`')?.0;
        (!name.is_empty() && !name.contains(' ')).then(|| name.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_param_is_the_first_quoted_field() {
        let e = TranslateError::Invalid("`input[0].type` \"x\" is not supported".into());
        assert_eq!(e.param().as_deref(), Some("input[0].type"));
        let e = TranslateError::Unsupported("`n` above 1 cannot be sent".into());
        assert_eq!(e.param().as_deref(), Some("n"));
        assert_eq!(TranslateError::Invalid("no field".into()).param(), None);
    }
}

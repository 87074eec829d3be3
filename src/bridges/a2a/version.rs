//! The protocol version a request asks for (`A2A-Version`): absent or 1.x is
//! served, anything else is `VersionNotSupported`.

use super::error::A2aError;
use crate::a2a_wire::VERSION_HEADER;
use axum::http::HeaderMap;

/// Refuses a request for a protocol version other than 1.x.
pub fn check_version(headers: &HeaderMap) -> Result<(), A2aError> {
    let Some(v) = headers.get(VERSION_HEADER) else {
        return Ok(());
    };
    let v = v.to_str().unwrap_or("").trim();
    if v.is_empty() || v == "1" || v.starts_with("1.") {
        return Ok(());
    }
    Err(A2aError::VersionNotSupported(v.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn only_1_x_is_served() {
        let mut h = HeaderMap::new();
        assert!(check_version(&h).is_ok());
        h.insert(VERSION_HEADER, HeaderValue::from_static("1.0"));
        assert!(check_version(&h).is_ok());
        h.insert(VERSION_HEADER, HeaderValue::from_static("0.3"));
        assert_eq!(check_version(&h).expect_err("0.3").code(), -32009);
    }
}

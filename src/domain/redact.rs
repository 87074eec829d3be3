//! Secrets out of URLs before they are shown: the password of a URL's userinfo (or a
//! bare userinfo token) and the values of credential-like query parameters
//! (`key=`, `api_key=`, `token=`, `secret=`, ...) become `***`. Pure string work, so
//! every layer can redact what it prints or logs with the same rules.

/// What a redacted secret is replaced with.
pub const MASK: &str = "***";

/// `url` with the userinfo password and credential-like query values masked:
/// `http://user:pw@host/p?api_key=k&x=1` becomes `http://user:***@host/p?api_key=***&x=1`.
/// A userinfo without a password (`https://TOKEN@host`) is masked whole. Text that is
/// not a URL comes back unchanged.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest_start = scheme_end + 3;
    let rest = &url[rest_start..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_len];
    let mut out = String::with_capacity(url.len());
    out.push_str(&url[..rest_start]);
    match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            match userinfo.split_once(':') {
                Some((user, _)) => {
                    out.push_str(user);
                    out.push(':');
                    out.push_str(MASK);
                }
                None => out.push_str(MASK),
            }
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
    let tail = &rest[authority_len..];
    let (before_fragment, fragment) = match tail.find('#') {
        Some(i) => tail.split_at(i),
        None => (tail, ""),
    };
    match before_fragment.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            let pairs: Vec<String> = query.split('&').map(redact_pair).collect();
            out.push_str(&pairs.join("&"));
        }
        None => out.push_str(before_fragment),
    }
    out.push_str(fragment);
    out
}

/// `text` with every URL in it (`scheme://...` up to whitespace or a closing quote,
/// bracket or parenthesis) passed through [`redact_url`]; for error messages that
/// quote a URL.
pub fn redact_urls_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(sep) = rest.find("://") {
        let start = rest[..sep]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |i| i + 1);
        let end = rest[sep..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ')' | '>' | ']'))
            .map_or(rest.len(), |i| sep + i);
        out.push_str(&rest[..start]);
        if start == sep {
            out.push_str(&rest[start..end]);
        } else {
            out.push_str(&redact_url(&rest[start..end]));
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn redact_pair(pair: &str) -> String {
    match pair.split_once('=') {
        Some((name, value)) if !value.is_empty() && is_secret_name(name) => {
            format!("{name}={MASK}")
        }
        _ => pair.to_string(),
    }
}

fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "key",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "sig",
        "signature",
        "auth",
    ]
    .iter()
    .any(|s| n == *s || n.ends_with(&format!("_{s}")) || n.ends_with(&format!("-{s}")))
        || n.ends_with("key")
        || n.ends_with("token")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_passwords_and_bare_tokens_are_masked() {
        assert_eq!(
            redact_url("http://user:secret@127.0.0.1:1/v1"),
            "http://user:***@127.0.0.1:1/v1"
        );
        assert_eq!(
            redact_url("https://ghp_abc@example.com"),
            "https://***@example.com"
        );
        assert_eq!(
            redact_url("http://u:p@ss@host/x?y=1"),
            "http://u:***@host/x?y=1"
        );
        assert_eq!(
            redact_url("https://api.openai.com/v1"),
            "https://api.openai.com/v1"
        );
        assert_eq!(redact_url("not a url"), "not a url");
    }

    #[test]
    fn credential_query_values_are_masked_and_others_kept() {
        assert_eq!(
            redact_url("https://h/p?key=abc&model=m&api_key=k&access_token=t&apiKey=z#frag"),
            "https://h/p?key=***&model=m&api_key=***&access_token=***&apiKey=***#frag"
        );
        assert_eq!(redact_url("https://h/p?token="), "https://h/p?token=");
    }

    #[test]
    fn urls_inside_messages_are_redacted() {
        assert_eq!(
            redact_urls_in(
                "error sending request for url (http://user:secret@127.0.0.1:1/v1/models?token=t): refused"
            ),
            "error sending request for url (http://user:***@127.0.0.1:1/v1/models?token=***): refused"
        );
        assert_eq!(redact_urls_in("no urls here"), "no urls here");
        assert_eq!(
            redact_urls_in("base_url \"ftp://a:b@h\" must be http"),
            "base_url \"ftp://a:***@h\" must be http"
        );
    }
}

//! What a push notification config must be before it is kept: an absolute
//! `http` or `https` URL with a host and no user information, whose host is not
//! a link-local, multicast, broadcast or unspecified address (cloud metadata
//! services live at link-local addresses); a token and authentication that fit
//! in an HTTP header; a config id of sane length. Loopback and private
//! addresses are allowed: Hecate is a local hub and its clients' webhooks are
//! often on the same machine or network (docs/a2a.md, "Push notifications").

use crate::a2a_wire::{AuthenticationInfo, TaskPushNotificationConfig};
use crate::bridges::a2a::error::A2aError;
use axum::http::HeaderValue;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Longest webhook URL accepted.
const MAX_URL: usize = 2048;
/// Longest token accepted.
const MAX_TOKEN: usize = 1024;
/// Longest credentials accepted.
const MAX_CREDENTIALS: usize = 4096;
/// Longest config id accepted.
const MAX_ID: usize = 256;

/// `config` checked and tidied (an empty token or authentication dropped, the
/// tenant cleared); its `id` and `taskId` are set by [`bind`].
pub fn checked(
    mut config: TaskPushNotificationConfig,
) -> Result<TaskPushNotificationConfig, A2aError> {
    config.url = config.url.trim().to_string();
    webhook_url(&config.url)?;
    config.token = config.token.filter(|t| !t.is_empty());
    if let Some(t) = &config.token {
        if t.len() > MAX_TOKEN {
            return Err(invalid(format!(
                "the token is longer than {MAX_TOKEN} bytes"
            )));
        }
        if HeaderValue::from_str(t).is_err() {
            return Err(invalid(
                "the token must be visible ASCII (it is sent in an HTTP header)".into(),
            ));
        }
    }
    config.authentication = match config.authentication.take() {
        Some(a) if a.scheme.is_empty() && a.credentials.is_empty() => None,
        Some(a) => Some(authentication(a)?),
        None => None,
    };
    if config.id.chars().count() > MAX_ID || config.id.chars().any(char::is_control) {
        return Err(invalid(format!(
            "the config id must be at most {MAX_ID} characters without control characters"
        )));
    }
    config.tenant = None;
    Ok(config)
}

/// `config` as kept for task `task_id`: its task set, and its id the task's
/// when the client gave none (as the official SDKs do).
pub fn bind(mut config: TaskPushNotificationConfig, task_id: &str) -> TaskPushNotificationConfig {
    config.task_id = task_id.to_string();
    if config.id.is_empty() {
        config.id = task_id.to_string();
    }
    config
}

/// Whether a webhook may be called at `ip`: not link-local, multicast,
/// broadcast or unspecified (IPv4-mapped IPv6 judged as the IPv4 inside).
pub fn allowed_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => allowed_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => allowed_v4(v4),
            None => allowed_v6(v6),
        },
    }
}

fn allowed_v4(ip: Ipv4Addr) -> bool {
    !(ip.is_link_local() || ip.is_multicast() || ip.is_broadcast() || ip.is_unspecified())
}

fn allowed_v6(ip: Ipv6Addr) -> bool {
    let link_local = ip.segments()[0] & 0xffc0 == 0xfe80;
    !(link_local || ip.is_multicast() || ip.is_unspecified())
}

/// `scheme://host:port` of a webhook URL: what logs show of it (its path and
/// query may hold a secret).
pub fn shown(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or("?");
    match url.port_or_known_default() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

/// Checks a webhook URL.
fn webhook_url(raw: &str) -> Result<reqwest::Url, A2aError> {
    if raw.is_empty() {
        return Err(invalid("the config has no url".into()));
    }
    if raw.len() > MAX_URL {
        return Err(invalid(format!("the url is longer than {MAX_URL} bytes")));
    }
    let url = reqwest::Url::parse(raw).map_err(|e| {
        invalid(format!(
            "the url {:?} is not an absolute URL ({e})",
            head(raw)
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "the url's scheme is {:?}; a webhook is http or https",
            url.scheme()
        )));
    }
    let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
        return Err(invalid("the url has no host".into()));
    };
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            "the url carries user information; put credentials in authentication".into(),
        ));
    }
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    if let Some(ip) = literal.parse::<IpAddr>().ok().filter(|ip| !allowed_ip(*ip)) {
        return Err(invalid(format!(
            "the url's host {ip} is a link-local, multicast, broadcast or unspecified address"
        )));
    }
    Ok(url)
}

/// Checks the authentication: both a scheme (an HTTP token) and credentials.
fn authentication(a: AuthenticationInfo) -> Result<AuthenticationInfo, A2aError> {
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if a.scheme.is_empty() || !a.scheme.chars().all(tchar) {
        return Err(invalid(
            "authentication.scheme must name an HTTP authentication scheme (Bearer, Basic, …)"
                .into(),
        ));
    }
    if a.credentials.is_empty() {
        return Err(invalid(
            "authentication has a scheme but no credentials".into(),
        ));
    }
    if a.credentials.len() > MAX_CREDENTIALS
        || HeaderValue::from_str(&format!("{} {}", a.scheme, a.credentials)).is_err()
    {
        return Err(invalid(format!(
            "authentication.credentials must be visible ASCII of at most {MAX_CREDENTIALS} bytes"
        )));
    }
    Ok(a)
}

/// The first characters of a URL, for an error.
fn head(raw: &str) -> String {
    raw.chars().take(60).collect()
}

fn invalid(why: String) -> A2aError {
    A2aError::InvalidParams(format!("invalid push notification config: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(url: &str) -> TaskPushNotificationConfig {
        TaskPushNotificationConfig {
            url: url.into(),
            ..TaskPushNotificationConfig::default()
        }
    }

    #[test]
    fn http_and_https_webhooks_are_taken_local_ones_included() {
        for url in [
            "https://hooks.example.com/a2a?k=v",
            "http://127.0.0.1:8080/hook",
            "http://[::1]:9/x",
            "http://10.0.0.5/hook",
            " http://localhost/h ",
        ] {
            assert!(checked(config(url)).is_ok(), "{url}");
        }
    }

    #[test]
    fn other_schemes_bad_urls_and_unroutable_hosts_are_invalid_params() {
        for url in [
            "",
            "ftp://h/x",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "not a url",
            "/relative/hook",
            "http://user:pw@h/hook",
            "http://169.254.169.254/latest/meta-data",
            "http://[fe80::1]/x",
            "http://[::ffff:169.254.169.254]/x",
            "http://0.0.0.0:80/x",
            "http://224.0.0.1/x",
            "http://255.255.255.255/x",
        ] {
            let e = checked(config(url)).expect_err(url);
            assert_eq!(e.code(), -32602, "{url}: {e}");
        }
        let long = format!("https://h/{}", "a".repeat(MAX_URL));
        assert!(checked(config(&long)).is_err());
    }

    #[test]
    fn tokens_and_authentication_must_fit_a_header() {
        let mut c = config("https://h/x");
        c.token = Some("line\nbreak".into());
        assert!(checked(c.clone()).is_err());
        c.token = Some(String::new());
        assert_eq!(checked(c.clone()).expect("empty token").token, None);
        c.authentication = Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: String::new(),
        });
        assert!(checked(c.clone()).is_err(), "a scheme without credentials");
        c.authentication = Some(AuthenticationInfo {
            scheme: "Bad Scheme".into(),
            credentials: "x".into(),
        });
        assert!(checked(c.clone()).is_err());
        c.authentication = Some(AuthenticationInfo::default());
        assert_eq!(checked(c.clone()).expect("empty").authentication, None);
        c.authentication = Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: "abc.def".into(),
        });
        assert!(checked(c).expect("bearer").authentication.is_some());
    }

    #[test]
    fn a_config_without_an_id_takes_its_tasks() {
        let c = bind(checked(config("https://h/x")).expect("ok"), "run_1");
        assert_eq!((c.id.as_str(), c.task_id.as_str()), ("run_1", "run_1"));
        let mut named = config("https://h/x");
        named.id = "mine".into();
        assert_eq!(bind(checked(named).expect("ok"), "run_1").id, "mine");
    }

    #[test]
    fn logs_show_only_the_scheme_host_and_port() {
        let url = reqwest::Url::parse("https://hooks.example.com/T0/secret?sig=1").expect("url");
        assert_eq!(shown(&url), "https://hooks.example.com:443");
    }

    #[test]
    fn addresses_a_webhook_may_use() {
        assert!(allowed_ip("127.0.0.1".parse().expect("ip")));
        assert!(allowed_ip("192.168.1.2".parse().expect("ip")));
        assert!(!allowed_ip("169.254.169.254".parse().expect("ip")));
        assert!(!allowed_ip("fe80::1".parse().expect("ip")));
        assert!(!allowed_ip("::".parse().expect("ip")));
    }
}

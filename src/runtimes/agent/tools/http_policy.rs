//! The `http_request` tool's egress policy (`[tasks] http_allow`): a URL must
//! match one of the configured patterns (`*` matches any run of characters,
//! over the whole URL), and every address its host resolves to must be public,
//! unless the matching pattern names that host literally (no `*` in its host),
//! which is how loopback, private and link-local targets are allowed.

use std::net::IpAddr;

/// One allow-list pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// The pattern as configured.
    pub raw: String,
    /// Whether its host part is written out (no `*`), allowing non-public
    /// addresses for that host.
    pub explicit_host: bool,
}

/// The allow list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpPolicy {
    patterns: Vec<Pattern>,
}

impl HttpPolicy {
    /// A policy over `patterns` (an empty list allows nothing).
    pub fn new(patterns: &[String]) -> Self {
        Self {
            patterns: patterns
                .iter()
                .map(|p| p.trim())
                .filter(|p| !p.is_empty())
                .map(|raw| Pattern {
                    raw: raw.to_string(),
                    explicit_host: host_of(raw).is_some_and(|h| !h.contains('*')),
                })
                .collect(),
        }
    }

    /// Whether no URL is allowed.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The first pattern `url` matches; a pattern with an explicit host comes
    /// before a wildcard one, so a literal entry is what decides for its host.
    pub fn matching(&self, url: &str) -> Option<&Pattern> {
        let mut hits = self.patterns.iter().filter(|p| glob(&p.raw, url));
        let first = hits.next()?;
        if first.explicit_host {
            return Some(first);
        }
        Some(hits.find(|p| p.explicit_host).unwrap_or(first))
    }
}

/// The host part of a pattern or URL (`None` without `scheme://`).
fn host_of(s: &str) -> Option<&str> {
    let rest = s.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    Some(match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    })
}

/// Whether `text` matches `pattern` in full, `*` matching any run.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Why an address is not public, if it is not: `loopback`, `private`,
/// `link_local`, `unspecified`, `multicast`, `broadcast` or `shared`
/// (carrier-grade NAT).
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            if v4.is_loopback() {
                Some("loopback")
            } else if v4.is_private() {
                Some("private")
            } else if v4.is_link_local() {
                Some("link_local")
            } else if v4.is_unspecified() || o[0] == 0 {
                Some("unspecified")
            } else if v4.is_multicast() {
                Some("multicast")
            } else if v4.is_broadcast() {
                Some("broadcast")
            } else if o[0] == 100 && (64..128).contains(&o[1]) {
                Some("shared")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return non_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("unspecified")
            } else if first & 0xfe00 == 0xfc00 {
                Some("private")
            } else if first & 0xffc0 == 0xfe80 {
                Some("link_local")
            } else if v6.is_multicast() {
                Some("multicast")
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_whole_urls_and_literal_hosts_win() {
        let p = HttpPolicy::new(&[
            "https://*".to_string(),
            "http://127.0.0.1:8080/*".to_string(),
        ]);
        assert!(p.matching("https://api.example.com/v1").is_some());
        assert!(
            !p.matching("https://api.example.com/v1")
                .expect("hit")
                .explicit_host
        );
        assert!(
            p.matching("http://127.0.0.1:8080/x")
                .expect("hit")
                .explicit_host
        );
        assert!(p.matching("http://127.0.0.1:9090/x").is_none());
        assert!(p.matching("ftp://example.com/").is_none());
        assert!(HttpPolicy::new(&[]).matching("https://a/").is_none());
        assert!(glob("a*c*", "abcxc") && !glob("a*d", "abc") && glob("*", ""));
        assert_eq!(host_of("http://[::1]:80/x"), Some("::1"));
        assert_eq!(host_of("https://u:p@h.example:1/"), Some("h.example"));
    }

    #[test]
    fn non_public_ranges_are_named() {
        let kind = |s: &str| non_public(s.parse().expect("ip"));
        assert_eq!(kind("127.0.0.1"), Some("loopback"));
        assert_eq!(kind("10.1.2.3"), Some("private"));
        assert_eq!(kind("172.20.0.1"), Some("private"));
        assert_eq!(kind("192.168.1.1"), Some("private"));
        assert_eq!(kind("169.254.169.254"), Some("link_local"));
        assert_eq!(kind("100.100.0.1"), Some("shared"));
        assert_eq!(kind("::1"), Some("loopback"));
        assert_eq!(kind("fd00::1"), Some("private"));
        assert_eq!(kind("fe80::1"), Some("link_local"));
        assert_eq!(kind("::ffff:127.0.0.1"), Some("loopback"));
        assert_eq!(kind("93.184.216.34"), None);
        assert_eq!(kind("2606:4700::1"), None);
    }
}

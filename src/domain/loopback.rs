//! Whether a URL's host names this machine's loopback: the rule that lets a
//! configured or discovered identity-provider URL use plain `http`.

/// Whether `host` (as a URL gives it, IPv6 in brackets or not) is `localhost`,
/// a `*.localhost` name or a loopback address.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_addresses_only() {
        for host in [
            "localhost",
            "idp.localhost",
            "127.0.0.1",
            "127.8.0.1",
            "[::1]",
            "::1",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in ["", "idp.example", "localhost.example", "10.0.0.1", "[::2]"] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }
}

//! Why a provider is not routable, in the order the checks are read: the
//! `hecate doctor` command and the gateway's provider status give the same answer.

/// The reason code that keeps a provider out of routing, or `None` when it is
/// routable: a missing credential first, then a cooldown's reason, an unhealthy
/// provider, and a provider with no models.
pub fn routing_blocker(
    credential_ready: bool,
    cooling: Option<&'static str>,
    healthy: bool,
    has_models: bool,
) -> Option<&'static str> {
    if !credential_ready {
        Some("credential_missing")
    } else if let Some(reason) = cooling {
        Some(reason)
    } else if !healthy {
        Some("provider_unhealthy")
    } else if !has_models {
        Some("no_models")
    } else {
        None
    }
}

/// What a disabled provider's readiness says, and how to enable it:
/// `(message, operator_action)`, the same in `hecate doctor` and the gateway.
pub fn disabled_explained(provider: &str) -> (String, String) {
    (
        "The provider is disabled in the configuration; the router skips it.".to_string(),
        format!(
            "Enable it: set PROVIDER_{}_ENABLED=true, or remove enabled = false from \
             [providers.{provider}].",
            provider.to_ascii_uppercase()
        ),
    )
}

/// What a provider pointing back at this Hecate's address `own` says, and the
/// fix: `(message, operator_action)`, the same in `hecate doctor` and the gateway.
pub fn self_referential_explained(own: impl std::fmt::Display) -> (String, String) {
    (
        format!(
            "The base URL points back at this Hecate ({own}); requests would loop. It was \
             not probed."
        ),
        "Point the provider at the real upstream's base URL, not at Hecate's own address."
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::routing_blocker;

    #[test]
    fn the_first_failing_check_names_the_blocker() {
        assert_eq!(routing_blocker(true, None, true, true), None);
        assert_eq!(
            routing_blocker(false, Some("rate_limited"), false, false),
            Some("credential_missing")
        );
        assert_eq!(
            routing_blocker(true, Some("rate_limited"), false, false),
            Some("rate_limited")
        );
        assert_eq!(
            routing_blocker(true, None, false, false),
            Some("provider_unhealthy")
        );
        assert_eq!(routing_blocker(true, None, true, false), Some("no_models"));
    }
}

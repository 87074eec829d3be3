//! `[a2a_agents.NAME]`: remote A2A agents declared by their card URL, each with
//! an optional bearer token read from the environment and its timeouts.

use super::Config;
use super::error::ConfigError;
use crate::adapters::a2a::{DEFAULT_CARD_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, RemoteAgentSpec};
use std::collections::HashMap;
use std::time::Duration;

impl Config {
    /// The remote A2A agents `[a2a_agents]` declares, checked: a name usable
    /// in `agent:NAME`, an `http(s)` card URL, timeouts above zero; a token
    /// variable that is not set is logged and no token sent.
    pub fn a2a_agents(
        &self,
        env: &HashMap<String, String>,
    ) -> Result<Vec<RemoteAgentSpec>, ConfigError> {
        let bad = |name: &str, message: String| ConfigError::Parse {
            path: self.path.clone(),
            message: format!("[a2a_agents.{name}] {message}"),
        };
        let mut out = Vec::new();
        for (id, s) in &self.file.a2a_agents {
            if id.is_empty() || id.contains(['/', ':', ' ']) {
                return Err(bad(
                    id,
                    "the name must not be empty or hold '/', ':' or spaces".into(),
                ));
            }
            let url = s.card_url.trim();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(bad(id, format!("card_url {url:?} is not an http(s) URL")));
            }
            let token = match &s.token_env {
                None => None,
                Some(var) => match env.get(var).filter(|v| !v.is_empty()) {
                    Some(t) => Some(t.clone()),
                    None => {
                        // The agent then refuses the calls (`unauthorized`), which its
                        // readiness and turns say; other commands keep working.
                        tracing::warn!("[a2a_agents.{id}] token_env names {var}, which is not set");
                        None
                    }
                },
            };
            let secs = |v: Option<u64>, key: &str, default: Duration| match v {
                None => Ok(default),
                Some(0) => Err(bad(id, format!("{key} must be above 0"))),
                Some(n) => Ok(Duration::from_secs(n)),
            };
            out.push(RemoteAgentSpec {
                id: id.clone(),
                name: s.name.clone().filter(|n| !n.trim().is_empty()),
                card_url: url.to_string(),
                token,
                card_timeout: secs(
                    s.card_timeout_secs,
                    "card_timeout_secs",
                    DEFAULT_CARD_TIMEOUT,
                )?,
                request_timeout: secs(
                    s.request_timeout_secs,
                    "request_timeout_secs",
                    DEFAULT_REQUEST_TIMEOUT,
                )?,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(toml_text: &str) -> Config {
        let dir = std::env::temp_dir().join(format!("hecate-a2a-cfg-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("config.toml");
        std::fs::write(&path, toml_text).expect("write");
        Config::load(&path, &HashMap::new()).expect("load")
    }

    #[test]
    fn declared_agents_read_with_their_token_and_defaults() {
        let c = config(
            "[a2a_agents.remote]\ncard_url = \"http://127.0.0.1:9/.well-known/agent-card.json\"\ntoken_env = \"REMOTE_TOKEN\"\nrequest_timeout_secs = 30\n",
        );
        let env = HashMap::from([("REMOTE_TOKEN".to_string(), "s3cret".to_string())]);
        let agents = c.a2a_agents(&env).expect("agents");
        assert_eq!(agents.len(), 1);
        assert_eq!(agents[0].id, "remote");
        assert_eq!(agents[0].token.as_deref(), Some("s3cret"));
        assert_eq!(agents[0].card_timeout, DEFAULT_CARD_TIMEOUT);
        assert_eq!(agents[0].request_timeout, Duration::from_secs(30));
        let unset = c.a2a_agents(&HashMap::new()).expect("unset token");
        assert_eq!(unset[0].token, None);
    }

    #[test]
    fn a_card_url_must_be_http() {
        let c = config("[a2a_agents.x]\ncard_url = \"file:///etc/passwd\"\n");
        let e = c.a2a_agents(&HashMap::new()).expect_err("file url");
        assert!(e.to_string().contains("[a2a_agents.x]"), "{e}");
    }
}

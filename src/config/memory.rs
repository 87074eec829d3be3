//! `[memory]`: which provider model embeds messages for long-term recall, how the
//! indexer batches them, and how many recalled messages a session injects by
//! default. Checked against the configured providers at startup.

use super::error::ConfigError;
use super::schema::MemorySection;
use crate::adapters::providers::{ProviderConfig, ProviderKind};
use crate::domain::recall::MAX_RECALL;
use std::path::Path;
use std::time::Duration;

/// Messages embedded per request unless configured.
pub const DEFAULT_BATCH_SIZE: usize = 32;

/// Largest batch accepted (OpenAI takes 2,048 inputs a request).
pub const MAX_BATCH_SIZE: usize = 2048;

/// Gather time of the indexer unless configured.
pub const DEFAULT_BATCH_DELAY: Duration = Duration::from_millis(250);

/// The `[memory]` options, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryOptions {
    /// `(provider, model)` of the embeddings model, when recall is on.
    pub embeddings: Option<(String, String)>,
    /// Vector length asked of the model.
    pub dimensions: Option<u32>,
    /// Messages per embeddings request.
    pub batch_size: usize,
    /// How long the indexer gathers before a request.
    pub batch_delay: Duration,
    /// Recalled messages per turn for sessions that name none.
    pub default_recall: u32,
}

/// Validates `[memory]` against the configured `providers`: the embeddings model
/// must be `provider/model` on an OpenAI-compatible provider; sizes must be in
/// range. Errors name the file and the key.
pub(super) fn memory(
    path: &Path,
    m: &MemorySection,
    providers: &[ProviderConfig],
) -> Result<MemoryOptions, ConfigError> {
    let bad = |message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    };
    let embeddings = match m.embeddings.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(reference) => {
            let Some((provider, model)) = reference
                .split_once('/')
                .filter(|(p, m)| !p.is_empty() && !m.is_empty())
            else {
                return Err(bad(format!(
                    "[memory] embeddings {reference:?} must be PROVIDER/MODEL, such as \"ollama/nomic-embed-text\""
                )));
            };
            let Some(p) = providers.iter().find(|p| p.name == provider) else {
                let names: Vec<&str> = providers.iter().map(|p| p.name.as_str()).collect();
                return Err(bad(format!(
                    "[memory] embeddings names provider {provider:?}, which is not configured (configured: {names:?})"
                )));
            };
            if p.kind != ProviderKind::Openai {
                return Err(bad(format!(
                    "[memory] embeddings names provider {provider:?}, which speaks {} and has no \
                     embeddings endpoint; use an OpenAI-compatible provider",
                    p.kind.as_str()
                )));
            }
            Some((provider.to_string(), model.to_string()))
        }
    };
    if let Some(d) = m.dimensions
        && !(1..=16_000).contains(&d)
    {
        return Err(bad(format!(
            "[memory] dimensions must be between 1 and 16000, got {d}"
        )));
    }
    let batch_size = m.batch_size.unwrap_or(DEFAULT_BATCH_SIZE);
    if !(1..=MAX_BATCH_SIZE).contains(&batch_size) {
        return Err(bad(format!(
            "[memory] batch_size must be between 1 and {MAX_BATCH_SIZE}, got {batch_size}"
        )));
    }
    let default_recall = m.recall.unwrap_or(0);
    if default_recall > MAX_RECALL {
        return Err(bad(format!(
            "[memory] recall must be between 0 and {MAX_RECALL}, got {default_recall}"
        )));
    }
    Ok(MemoryOptions {
        embeddings,
        dimensions: m.dimensions,
        batch_size,
        batch_delay: m
            .batch_delay_ms
            .map_or(DEFAULT_BATCH_DELAY, Duration::from_millis),
        default_recall,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(name: &str, kind: ProviderKind) -> ProviderConfig {
        ProviderConfig {
            name: name.into(),
            kind,
            base_url: "http://127.0.0.1:1/v1".into(),
            api_key: None,
            models: vec![],
        }
    }

    #[test]
    fn embeddings_name_an_openai_compatible_provider_and_sizes_are_checked() {
        let path = Path::new("/etc/hecate.toml");
        let providers = [
            provider("ollama", ProviderKind::Openai),
            provider("ant", ProviderKind::Anthropic),
        ];
        let off = memory(path, &MemorySection::default(), &providers).expect("defaults");
        assert_eq!(off.embeddings, None);
        assert_eq!(off.batch_size, DEFAULT_BATCH_SIZE);
        assert_eq!(off.default_recall, 0);
        let on = MemorySection {
            embeddings: Some("ollama/nomic-embed-text".into()),
            dimensions: Some(64),
            batch_size: Some(8),
            batch_delay_ms: Some(10),
            recall: Some(3),
        };
        let on = memory(path, &on, &providers).expect("valid");
        assert_eq!(
            on.embeddings,
            Some(("ollama".into(), "nomic-embed-text".into()))
        );
        assert_eq!(on.batch_delay, Duration::from_millis(10));
        for (section, needle) in [
            (
                MemorySection {
                    embeddings: Some("nomic".into()),
                    ..Default::default()
                },
                "PROVIDER/MODEL",
            ),
            (
                MemorySection {
                    embeddings: Some("nope/m".into()),
                    ..Default::default()
                },
                "not configured",
            ),
            (
                MemorySection {
                    embeddings: Some("ant/m".into()),
                    ..Default::default()
                },
                "no embeddings endpoint",
            ),
            (
                MemorySection {
                    batch_size: Some(0),
                    ..Default::default()
                },
                "[memory] batch_size",
            ),
            (
                MemorySection {
                    recall: Some(MAX_RECALL + 1),
                    ..Default::default()
                },
                "[memory] recall",
            ),
        ] {
            let e = memory(path, &section, &providers).expect_err(needle);
            assert!(e.to_string().contains(needle), "{e}");
            assert!(e.to_string().contains("/etc/hecate.toml"), "{e}");
        }
    }
}

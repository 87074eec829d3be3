//! Embeddings in the OpenAI `/v1/embeddings` shape, which OpenAI, Ollama, LM
//! Studio, llama.cpp and vLLM all serve: one request embeds a batch of texts, the
//! answer's `data[].index` says which vector belongs to which text.

use super::{ProviderClient, ProviderConfig, ProviderError, ProviderKind, join_url, status_error};
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;

/// How long one embeddings request may take, connection included.
pub const EMBED_TIMEOUT: Duration = Duration::from_secs(30);

/// A provider model that turns texts into vectors.
#[derive(Debug, Clone)]
pub struct Embedder {
    client: ProviderClient,
    model: String,
    dimensions: Option<u32>,
}

/// One vector of the answer.
#[derive(Debug, Deserialize)]
struct Item {
    index: usize,
    embedding: Vec<f32>,
}

/// The answer's body.
#[derive(Debug, Deserialize)]
struct Answer {
    data: Vec<Item>,
}

impl Embedder {
    /// An embedder calling `model` on `client`'s provider, asking for
    /// `dimensions` when given (the `dimensions` request field). Anthropic has no
    /// embeddings endpoint, so only OpenAI-compatible providers qualify.
    pub fn new(
        client: ProviderClient,
        model: &str,
        dimensions: Option<u32>,
    ) -> Result<Self, ProviderError> {
        if client.config().kind != ProviderKind::Openai {
            return Err(ProviderError::Malformed(format!(
                "provider {:?} speaks {}, which has no embeddings endpoint; name an \
                 OpenAI-compatible provider (OpenAI, Ollama, LM Studio, llama.cpp, vLLM)",
                client.config().name,
                client.config().kind.as_str()
            )));
        }
        Ok(Self {
            client,
            model: model.to_string(),
            dimensions,
        })
    }

    /// `provider/model`, as the configuration names it.
    pub fn name(&self) -> String {
        format!("{}/{}", self.client.config().name, self.model)
    }

    /// The model name alone (vectors are stored with it: two models' vectors are
    /// never compared).
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The provider's name.
    pub fn provider(&self) -> &str {
        &self.client.config().name
    }

    /// The dimensions asked for, when configured.
    pub fn dimensions(&self) -> Option<u32> {
        self.dimensions
    }

    /// Embeds `texts` in one request, answering one vector per text in their
    /// order. An answer with a missing, repeated or misplaced index, vectors of
    /// unequal length or of another length than configured is `Malformed`.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ProviderError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let cfg: &ProviderConfig = self.client.config();
        let mut body = json!({"model": self.model, "input": texts, "encoding_format": "float"});
        if let Some(d) = self.dimensions {
            body["dimensions"] = json!(d);
        }
        let mut rb = self
            .client
            .http()
            .post(join_url(&cfg.base_url, "embeddings"))
            .timeout(EMBED_TIMEOUT)
            .json(&body);
        if let Some(k) = cfg.api_key.as_ref().filter(|k| !k.is_empty()) {
            rb = rb.bearer_auth(k);
        }
        let resp = rb.send().await?;
        if !resp.status().is_success() {
            return Err(status_error(resp).await);
        }
        let v: Value = resp
            .json()
            .await
            .map_err(|e| ProviderError::Malformed(format!("embeddings answer: {e}")))?;
        let answer: Answer = serde_json::from_value(v)
            .map_err(|e| ProviderError::Malformed(format!("embeddings answer: {e}")))?;
        order(answer.data, texts.len(), self.dimensions)
    }
}

/// Puts the answer's vectors in input order and checks their shape.
fn order(
    data: Vec<Item>,
    want: usize,
    dimensions: Option<u32>,
) -> Result<Vec<Vec<f32>>, ProviderError> {
    if data.len() != want {
        return Err(ProviderError::Malformed(format!(
            "embeddings answer has {} vectors for {want} inputs",
            data.len()
        )));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; want];
    for item in data {
        let slot = out.get_mut(item.index).ok_or_else(|| {
            ProviderError::Malformed(format!(
                "embeddings answer index {} out of range",
                item.index
            ))
        })?;
        if slot.replace(item.embedding).is_some() {
            return Err(ProviderError::Malformed(format!(
                "embeddings answer repeats index {}",
                item.index
            )));
        }
    }
    let out: Vec<Vec<f32>> = out.into_iter().flatten().collect();
    let len = out.first().map_or(0, Vec::len);
    if len == 0 || out.iter().any(|v| v.len() != len) {
        return Err(ProviderError::Malformed(
            "embeddings answer has empty vectors or vectors of unequal length".into(),
        ));
    }
    if let Some(d) = dimensions
        && len != d as usize
    {
        return Err(ProviderError::Malformed(format!(
            "embeddings answer has {len} dimensions, {d} were asked for"
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(index: usize, embedding: &[f32]) -> Item {
        Item {
            index,
            embedding: embedding.to_vec(),
        }
    }

    #[test]
    fn vectors_come_back_in_input_order_and_bad_answers_are_malformed() {
        let ok = order(vec![item(1, &[0.0, 1.0]), item(0, &[1.0, 0.0])], 2, Some(2));
        assert_eq!(ok.expect("ordered"), vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
        for (data, want, dims) in [
            (vec![item(0, &[1.0])], 2, None),
            (vec![item(0, &[1.0]), item(0, &[1.0])], 2, None),
            (vec![item(0, &[1.0]), item(5, &[1.0])], 2, None),
            (vec![item(0, &[1.0]), item(1, &[1.0, 2.0])], 2, None),
            (vec![item(0, &[1.0])], 1, Some(3)),
            (vec![item(0, &[])], 1, None),
        ] {
            let e = order(data, want, dims).expect_err("malformed");
            assert!(matches!(e, ProviderError::Malformed(_)), "{e}");
        }
    }

    #[test]
    fn anthropic_providers_have_no_embeddings() {
        let cfg = ProviderConfig {
            name: "ant".into(),
            kind: ProviderKind::Anthropic,
            base_url: "http://127.0.0.1:1".into(),
            api_key: None,
            models: vec![],
        };
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = ProviderClient::new(reqwest::Client::new(), cfg);
        let e = Embedder::new(client, "m", None).expect_err("refused");
        assert!(e.to_string().contains("no embeddings endpoint"), "{e}");
    }
}

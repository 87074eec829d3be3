//! The HTTP pieces both provider APIs share: joining URLs, reading error bodies,
//! listing models, classifying a failed response.

use super::error::ProviderError;

/// Joins a base URL and a path with exactly one slash between them.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// Reads an error response body (capped) for the error message.
pub(crate) async fn error_body(resp: reqwest::Response) -> String {
    let text = resp.text().await.unwrap_or_default();
    let mut end = text.len().min(2000);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

/// Sends a model-listing request and returns the `data[].id` values, the shape both
/// the OpenAI and the Anthropic listings share.
pub(crate) async fn model_ids(
    request: reqwest::RequestBuilder,
) -> Result<Vec<String>, ProviderError> {
    let resp = request.send().await?;
    if !resp.status().is_success() {
        return Err(status_error(resp).await);
    }
    let v: serde_json::Value = resp
        .json()
        .await
        .map_err(|e| ProviderError::Malformed(e.to_string()))?;
    Ok(v["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["id"].as_str().map(str::to_string))
        .collect())
}

/// Classifies a failed HTTP response.
pub(crate) async fn status_error(resp: reqwest::Response) -> ProviderError {
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = error_body(resp).await;
    ProviderError::Status {
        status,
        body,
        retry_after,
    }
}

/// Sends a chat request and answers the response when its status is a success,
/// else the classified failure (a network error or the provider's status).
pub(crate) async fn send_chat(
    request: reqwest::RequestBuilder,
) -> Result<reqwest::Response, ProviderError> {
    let resp = request.send().await?;
    if !resp.status().is_success() {
        return Err(status_error(resp).await);
    }
    Ok(resp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_urls() {
        assert_eq!(join_url("http://x/v1/", "/models"), "http://x/v1/models");
    }
}

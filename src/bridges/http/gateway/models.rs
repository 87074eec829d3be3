//! `GET /v1/models` bodies: OpenAI's list and the Anthropic SDK's page.

use crate::engine::gateway::ListedModel;
use serde_json::{Value, json};

/// The OpenAI list: `{"object": "list", "data": [{"id", "object": "model", ...}]}`,
/// with Hecate's routing under each entry's `metadata`.
pub fn openai_list(models: &[ListedModel]) -> Value {
    let data: Vec<Value> = models
        .iter()
        .map(|m| {
            json!({
                "id": m.id,
                "object": "model",
                "created": 0,
                "owned_by": m.provider,
                "metadata": {
                    "provider": m.provider,
                    "provider_kind": m.provider_kind,
                    "model": m.model,
                    "default": m.default,
                    "discovery_source": m.discovery_source,
                    "capabilities": m.capabilities,
                },
            })
        })
        .collect();
    json!({"object": "list", "data": data})
}

/// The Anthropic page: `{"data": [{"type": "model", "id", "display_name",
/// "created_at"}], "has_more": false, "first_id", "last_id"}`.
pub fn anthropic_list(models: &[ListedModel]) -> Value {
    let data: Vec<Value> = models
        .iter()
        .map(|m| {
            json!({
                "type": "model",
                "id": m.id,
                "display_name": format!("{} ({})", m.model, m.provider),
                "created_at": "1970-01-01T00:00:00Z",
            })
        })
        .collect();
    json!({
        "data": data,
        "has_more": false,
        "first_id": models.first().map(|m| m.id.clone()),
        "last_id": models.last().map(|m| m.id.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::capability::ModelCapabilities;

    #[test]
    fn both_list_shapes() {
        let m = [ListedModel {
            id: "fix/m".into(),
            provider: "fix".into(),
            model: "m".into(),
            provider_kind: "openai",
            discovery_source: "config",
            default: true,
            capabilities: Some(ModelCapabilities::merge(&[])),
        }];
        let o = openai_list(&m);
        assert_eq!(o["object"], "list");
        assert_eq!(o["data"][0]["id"], "fix/m");
        assert_eq!(o["data"][0]["metadata"]["provider"], "fix");
        assert_eq!(o["data"][0]["metadata"]["default"], true);
        assert_eq!(
            o["data"][0]["metadata"]["capabilities"]["tool_calling"],
            "unknown"
        );
        assert_eq!(
            o["data"][0]["metadata"]["capabilities"]["source"],
            "default"
        );
        let a = anthropic_list(&m);
        assert_eq!(a["data"][0]["type"], "model");
        assert_eq!(a["has_more"], false);
        assert_eq!(a["last_id"], "fix/m");
        assert_eq!(anthropic_list(&[])["first_id"], Value::Null);
    }
}

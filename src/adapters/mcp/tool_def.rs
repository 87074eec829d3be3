//! The few members of an upstream MCP definition the hub reads or writes: a tool's
//! or prompt's `name` and the `_meta` note of where a proxied definition came from.
//! Everything else stays opaque JSON, so the engine never opens an MCP payload.

use serde_json::{Map, Value, json};

/// The `_meta` key naming a proxied tool's upstream server and original name.
pub const UPSTREAM_META_KEY: &str = "hecate/upstream";

/// A proxied tool (or prompt) definition as the hub exposes it: renamed to
/// `exposed`, with its upstream and original name recorded under `_meta`
/// ([`UPSTREAM_META_KEY`]); everything else, the input schema included, verbatim.
pub fn annotate(mut definition: Value, exposed: &str, server: &str, original: &str) -> Value {
    if let Some(obj) = definition.as_object_mut() {
        obj.insert("name".into(), Value::String(exposed.to_string()));
        let meta = obj
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(m) = meta.as_object_mut() {
            m.insert(
                UPSTREAM_META_KEY.into(),
                json!({"server": server, "name": original}),
            );
        }
    }
    definition
}

/// The `name` member of a tool or prompt definition (empty when missing).
pub fn name_of(v: &Value) -> String {
    v.get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_keeps_the_schema_and_records_the_origin() {
        let def = json!({"name": "echo", "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "$defs": {"x": {}}}, "_meta": {"k": 1}});
        let out = annotate(def.clone(), "up__echo", "up", "echo");
        assert_eq!(out["name"], "up__echo");
        assert_eq!(out["inputSchema"], def["inputSchema"]);
        assert_eq!(out["_meta"]["k"], 1);
        assert_eq!(out["_meta"][UPSTREAM_META_KEY]["name"], "echo");
        assert_eq!(name_of(&out), "up__echo");
        assert_eq!(name_of(&json!({})), "");
    }
}

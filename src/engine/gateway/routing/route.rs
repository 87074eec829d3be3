//! Which provider answers a gateway request: `provider/model`, a bare model
//! resolved across the providers (their declared models, else what they list),
//! or the configured default model when the request names none. `resolve`
//! wants exactly one provider; `candidates` lists every provider that may
//! answer, in the order the gateway tries them. The agent loop resolves its
//! model here too (`route`), so both name models alike.

use crate::adapters::providers::ProviderKind;
use crate::domain::capability::ModelCapabilities;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::runtimes::model::ModelRuntime;
use serde_json::Value;
use std::time::Duration;

/// One routable model id and what it routes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedModel {
    /// The id a client sends: `provider/model`, or a bare model that only one
    /// provider serves.
    pub id: String,
    /// The provider serving it.
    pub provider: String,
    /// The model as that provider names it.
    pub model: String,
    /// The provider's format (`openai` or `anthropic`).
    pub provider_kind: &'static str,
    /// `config` (the operator declared it) or `provider` (the provider listed it).
    pub discovery_source: &'static str,
    /// Whether it is the gateway's default model.
    pub default: bool,
    /// Its effective capabilities, when known.
    pub capabilities: Option<ModelCapabilities>,
}

/// How long a provider that declares no models is given to list them.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);

/// Detail `reason` of a request that names no model while none is configured.
pub const MODEL_REQUIRED: &str = "model_required";
/// Detail `reason` of a model no configured provider serves.
pub const MODEL_NOT_FOUND: &str = "model_not_found";
/// Detail `reason` of a bare model several providers serve.
pub const MODEL_AMBIGUOUS: &str = "model_ambiguous";

/// What routing knows about one provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderModels {
    /// The provider's name.
    pub name: String,
    /// Its wire protocol.
    pub kind: ProviderKind,
    /// The models it serves: the declared ones, else those it listed (empty when
    /// it declares none and was not or could not be asked).
    pub models: Vec<String>,
    /// Whether `models` is the operator's declaration (a closed set).
    pub declared: bool,
}

/// Where a request goes, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayRoute {
    /// The provider's name.
    pub provider: String,
    /// The model as the provider names it.
    pub model: String,
    /// `requested_model`, `pinned_provider` or `global_default_model`.
    pub reason: &'static str,
}

/// What routing knows about every provider of `models`; providers that
/// declare no models are asked for their list when `discover` is set.
pub async fn providers_of(models: &ModelRuntime, discover: bool) -> Vec<ProviderModels> {
    futures::future::join_all(models.providers().map(|c| async move {
        let cfg = c.config();
        let declared = !cfg.models.is_empty();
        let models = if declared {
            cfg.models.clone()
        } else if discover {
            tokio::time::timeout(DISCOVERY_TIMEOUT, c.list_models())
                .await
                .ok()
                .and_then(|r| r.ok())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        ProviderModels {
            name: cfg.name.clone(),
            kind: cfg.kind,
            models,
            declared,
        }
    }))
    .await
}

/// Resolves `requested` (or `default`) over the providers of `models`: with
/// what they declare first, asking the providers that declare nothing for
/// their model lists only when no provider is known to serve it.
pub async fn route(
    models: &ModelRuntime,
    requested: Option<&str>,
    default: Option<&str>,
) -> Result<GatewayRoute> {
    let quick = providers_of(models, false).await;
    match resolve(&quick, requested, default) {
        Err(e) if e.details.get("reason").and_then(Value::as_str) == Some(MODEL_NOT_FOUND) => {
            resolve(&providers_of(models, true).await, requested, default)
        }
        other => other,
    }
}

/// Every provider that may answer `requested` (or `default`), in the order
/// they are tried; providers that declare no models are asked for their list
/// only when the quick look finds none.
pub async fn route_candidates(
    models: &ModelRuntime,
    requested: Option<&str>,
    default: Option<&str>,
) -> Result<Vec<GatewayRoute>> {
    let quick = providers_of(models, false).await;
    match candidates(&quick, requested, default) {
        Err(e) if e.details.get("reason").and_then(Value::as_str) == Some(MODEL_NOT_FOUND) => {
            candidates(&providers_of(models, true).await, requested, default)
        }
        other => other,
    }
}

/// The model a request asks for (trimmed), or `default` when it names none, and
/// whether the default was taken; `model_required` when there is neither.
fn model_asked<'a>(
    requested: Option<&'a str>,
    default: Option<&'a str>,
) -> Result<(&'a str, bool)> {
    if let Some(r) = requested.map(str::trim).filter(|r| !r.is_empty()) {
        return Ok((r, false));
    }
    let d = default
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .ok_or_else(no_model)?;
    Ok((d, true))
}

/// Resolves `requested` (or `default` when the request names no model).
pub fn resolve(
    providers: &[ProviderModels],
    requested: Option<&str>,
    default: Option<&str>,
) -> Result<GatewayRoute> {
    let (model, defaulted) = model_asked(requested, default)?;
    let mut route = resolve_named(providers, model)?;
    if defaulted {
        route.reason = "global_default_model";
    }
    Ok(route)
}

fn resolve_named(providers: &[ProviderModels], requested: &str) -> Result<GatewayRoute> {
    let mut routes = candidates_named(providers, requested)?;
    if routes.len() == 1 {
        return Ok(routes.remove(0));
    }
    let names: Vec<String> = routes
        .iter()
        .map(|r| format!("{}/{}", r.provider, r.model))
        .collect();
    Err(HecateError::invalid(format!(
        "model {requested:?} is served by several providers; name one of {names:?}"
    ))
    .with_user_message("More than one provider serves this model.")
    .with_operator_action("Send the model as `provider/model`.")
    .with_detail("reason", MODEL_AMBIGUOUS)
    .with_detail("candidates", names))
}

/// Every provider that may answer `requested` (or `default` when the request
/// names no model), in provider order: one for `provider/model`, each provider
/// serving a bare model. The gateway tries them in turn; [`resolve`] wants one.
pub fn candidates(
    providers: &[ProviderModels],
    requested: Option<&str>,
    default: Option<&str>,
) -> Result<Vec<GatewayRoute>> {
    let (model, defaulted) = model_asked(requested, default)?;
    let mut routes = candidates_named(providers, model)?;
    if defaulted {
        for r in &mut routes {
            r.reason = "global_default_model";
        }
    }
    Ok(routes)
}

fn candidates_named(providers: &[ProviderModels], requested: &str) -> Result<Vec<GatewayRoute>> {
    if let Some((p, m)) = requested.split_once('/')
        && let Some(provider) = providers.iter().find(|c| c.name == p)
    {
        if provider.declared && !provider.models.iter().any(|x| x == m) {
            return Err(not_found(requested, providers)
                .with_detail("provider", p)
                .with_detail("suggested_models", provider.models.clone()));
        }
        return Ok(vec![GatewayRoute {
            provider: p.to_string(),
            model: m.to_string(),
            reason: "pinned_provider",
        }]);
    }
    let serving = providers
        .iter()
        .filter(|c| c.models.iter().any(|x| x == requested));
    let routes: Vec<GatewayRoute> = serving
        .map(|c| GatewayRoute {
            provider: c.name.clone(),
            model: requested.to_string(),
            reason: "requested_model",
        })
        .collect();
    if !routes.is_empty() {
        return Ok(routes);
    }
    match providers {
        [only] if !only.declared => Ok(vec![GatewayRoute {
            provider: only.name.clone(),
            model: requested.to_string(),
            reason: "requested_model",
        }]),
        _ => Err(not_found(requested, providers)),
    }
}

fn no_model() -> HecateError {
    HecateError::new(
        ErrorType::ModelRequired,
        "the request names no model and no default model is configured",
    )
    .with_operator_action("Send `model` (see GET /v1/models) or set `[gateway] default_model`.")
    .with_detail("reason", MODEL_REQUIRED)
}

fn not_found(requested: &str, providers: &[ProviderModels]) -> HecateError {
    let configured: Vec<String> = providers.iter().map(|p| p.name.clone()).collect();
    HecateError::new(
        ErrorType::ModelNotConfigured,
        format!("no configured provider serves model {requested:?}"),
    )
    .with_user_message("No configured provider serves this model.")
    .with_operator_action(
        "Choose a model from GET /v1/models (suggested_models lists the nearest), or declare it for a provider.",
    )
    .with_detail("reason", MODEL_NOT_FOUND)
    .with_detail("model", requested)
    .with_detail("configured_providers", configured)
    .with_detail("suggested_models", suggestions(requested, providers))
}

/// How many replacement models a `model_not_configured` error suggests.
const SUGGESTIONS: usize = 5;

/// The routable ids nearest to `requested` by name (Jaro-Winkler on the model
/// part), best first, at most [`SUGGESTIONS`]; every id when there are no more.
pub fn suggestions(requested: &str, providers: &[ProviderModels]) -> Vec<String> {
    let wanted = requested
        .rsplit('/')
        .next()
        .unwrap_or(requested)
        .to_lowercase();
    let mut scored: Vec<(f64, String)> = providers
        .iter()
        .flat_map(|p| {
            p.models.iter().map(|m| {
                let score = strsim::jaro_winkler(&wanted, &m.to_lowercase());
                (score, format!("{}/{m}", p.name))
            })
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(SUGGESTIONS)
        .map(|(_, id)| id)
        .collect()
}

/// Every routable id: `provider/model` for each model, plus the bare model when
/// only one provider serves it.
pub fn listing(providers: &[ProviderModels]) -> Vec<ListedModel> {
    let listed = |p: &ProviderModels, m: &String, id: String| ListedModel {
        id,
        provider: p.name.clone(),
        model: m.clone(),
        provider_kind: p.kind.as_str(),
        discovery_source: if p.declared { "config" } else { "provider" },
        default: false,
        capabilities: None,
    };
    let mut out = Vec::new();
    for p in providers {
        for m in &p.models {
            out.push(listed(p, m, format!("{}/{m}", p.name)));
        }
    }
    for p in providers {
        for m in &p.models {
            let servers = providers
                .iter()
                .filter(|q| q.models.iter().any(|x| x == m))
                .count();
            if servers == 1 {
                out.push(listed(p, m, m.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, models: &[&str], declared: bool) -> ProviderModels {
        ProviderModels {
            name: name.into(),
            kind: ProviderKind::Openai,
            models: models.iter().map(|m| m.to_string()).collect(),
            declared,
        }
    }

    fn reason(e: &HecateError) -> &str {
        e.details["reason"].as_str().unwrap_or_default()
    }

    #[test]
    fn an_unknown_model_suggests_the_nearest_routable_ids() {
        let ps = [
            p("a", &["gpt-4o-mini", "gpt-4o", "llama3"], true),
            p("b", &["claude-sonnet-4"], true),
        ];
        let e = resolve(&ps, Some("gpt-4o-mni"), None).expect_err("unknown");
        assert_eq!(e.error_type, ErrorType::ModelNotConfigured);
        let suggested = e.details["suggested_models"]
            .as_array()
            .expect("suggestions");
        assert_eq!(suggested[0], "a/gpt-4o-mini", "{suggested:?}");
        assert_eq!(
            suggested.len(),
            4,
            "every id when there are fewer than five"
        );
        assert_eq!(suggestions("b/claude-sonet-4", &ps)[0], "b/claude-sonnet-4");
        assert!(suggestions("x", &[]).is_empty());
    }

    #[test]
    fn routes_pinned_bare_and_default_models() {
        let ps = [
            p("a", &["m1", "shared"], true),
            p("b", &["m2", "shared"], false),
        ];
        let r = resolve(&ps, Some("a/m1"), None).expect("pinned");
        assert_eq!((r.provider.as_str(), r.model.as_str()), ("a", "m1"));
        assert_eq!(r.reason, "pinned_provider");
        let r = resolve(&ps, Some("b/anything"), None).expect("open provider");
        assert_eq!(r.model, "anything");
        let r = resolve(&ps, Some("m2"), None).expect("bare");
        assert_eq!((r.provider.as_str(), r.reason), ("b", "requested_model"));
        let r = resolve(&ps, None, Some("a/m1")).expect("default");
        assert_eq!(r.reason, "global_default_model");
        let e = resolve(&ps, Some("shared"), None).expect_err("ambiguous");
        assert_eq!(reason(&e), MODEL_AMBIGUOUS);
        assert_eq!(
            e.details["candidates"],
            serde_json::json!(["a/shared", "b/shared"])
        );
        let e = resolve(&ps, Some("a/nope"), None).expect_err("undeclared");
        assert_eq!(reason(&e), MODEL_NOT_FOUND);
        assert_eq!(
            reason(&resolve(&ps, Some("nope"), None).expect_err("x")),
            MODEL_NOT_FOUND
        );
        assert_eq!(
            reason(&resolve(&ps, None, None).expect_err("x")),
            MODEL_REQUIRED
        );
        let r = resolve(&[p("solo", &[], false)], Some("org/model"), None).expect("solo");
        assert_eq!(
            (r.provider.as_str(), r.model.as_str()),
            ("solo", "org/model")
        );
    }

    #[test]
    fn a_bare_model_served_by_several_providers_has_them_all_as_candidates() {
        let ps = [p("a", &["shared"], true), p("b", &["shared", "m2"], true)];
        let c = candidates(&ps, Some("shared"), None).expect("candidates");
        let names: Vec<&str> = c.iter().map(|r| r.provider.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(c.iter().all(|r| r.reason == "requested_model"));
        let c = candidates(&ps, None, Some("shared")).expect("default");
        assert!(c.iter().all(|r| r.reason == "global_default_model"));
        assert_eq!(
            candidates(&ps, Some("b/m2"), None).expect("pinned").len(),
            1
        );
        assert_eq!(
            reason(&candidates(&ps, Some("nope"), None).expect_err("x")),
            MODEL_NOT_FOUND
        );
    }

    #[test]
    fn listing_adds_bare_ids_only_when_unambiguous() {
        let ps = [p("a", &["m1", "shared"], true), p("b", &["shared"], true)];
        let ids: Vec<String> = listing(&ps).into_iter().map(|m| m.id).collect();
        assert_eq!(ids, ["a/m1", "a/shared", "b/shared", "m1"]);
    }
}

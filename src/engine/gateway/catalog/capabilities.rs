//! Model capabilities as the engine sees them: the stored records (operator
//! overrides and probe results, shared through the store by every replica and
//! cached here for a second or two), the config's declarations and the
//! built-in catalog, merged into the effective record of a provider/model pair.

use super::capability_cache::Records;
use crate::domain::capability::{
    CapabilityDeclaration, CapabilityRecord, CapabilitySource, ModelCapabilities, ToolCalling,
    catalog, catalog_reasoning,
};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::time::now_rfc3339;
use crate::engine::Gateway;
use crate::store::CapabilityKey;

/// An operator's override, as `PUT /hecate/v1/model-capabilities/overrides` takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapabilityOverride {
    /// The provider's name.
    pub provider: String,
    /// The model as the provider names it.
    pub model: String,
    /// What the operator says.
    pub declared: CapabilityDeclaration,
    /// Why.
    pub note: Option<String>,
}

impl<'e> Gateway<'e> {
    /// The stored records, from the cache when it is fresh.
    async fn capability_records(self) -> Result<std::sync::Arc<Records>> {
        let cache = &self.engine.inner.gateway.capabilities;
        if let Some(r) = cache.fresh() {
            return Ok(r);
        }
        Ok(cache.store(self.engine.store().list_capabilities().await?))
    }

    /// The effective capabilities of `provider`/`model`: each field from the
    /// strongest source that sets it (override, probe, config, catalog,
    /// defaults). A store that cannot be read leaves the stored sources out.
    pub async fn capabilities(self, provider: &str, model: &str) -> ModelCapabilities {
        let records = match self.capability_records().await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "capability records not read");
                Default::default()
            }
        };
        self.merge_capabilities(&records, provider, model)
    }

    /// Whether `provider`/`model` takes a reasoning effort: as the config
    /// declares it (`reasoning` under `[providers.NAME.capabilities."MODEL"]`),
    /// else as the built-in catalog knows the model's family.
    pub fn takes_reasoning_effort(self, provider: &str, model: &str) -> bool {
        self.engine
            .inner
            .gateway
            .routing
            .declared_reasoning(provider, model)
            .unwrap_or_else(|| catalog_reasoning(model))
    }

    /// The effective capabilities of many pairs with one read of the records.
    pub async fn capabilities_of(self, pairs: &[(String, String)]) -> Vec<ModelCapabilities> {
        let records = self.capability_records().await.unwrap_or_default();
        pairs
            .iter()
            .map(|(p, m)| self.merge_capabilities(&records, p, m))
            .collect()
    }

    fn merge_capabilities(
        self,
        records: &Records,
        provider: &str,
        model: &str,
    ) -> ModelCapabilities {
        let stored = records.get(&(provider.to_string(), model.to_string()));
        let of = |source| {
            stored
                .into_iter()
                .flatten()
                .find(|r| r.source == source)
                .map(|r| (source, &r.declared))
        };
        let settings = &self.engine.inner.gateway.routing;
        let declared = settings.declared(provider, model);
        let cat = catalog(model);
        let mut layers: Vec<(CapabilitySource, &CapabilityDeclaration)> = Vec::new();
        layers.extend(of(CapabilitySource::OperatorOverride));
        layers.extend(of(CapabilitySource::Probe));
        layers.extend(declared.into_iter().map(|d| (CapabilitySource::Config, d)));
        layers.extend(cat.as_ref().map(|d| (CapabilitySource::Catalog, d)));
        ModelCapabilities::merge(&layers)
    }

    /// Stores an operator override (replacing an earlier one) and answers the
    /// stored record. `tool_calling` must be said, and be `none`, `basic` or
    /// `parallel`.
    pub async fn put_capability_override(self, o: CapabilityOverride) -> Result<CapabilityRecord> {
        match o.declared.tool_calling {
            None | Some(ToolCalling::Unknown) => {
                return Err(
                    HecateError::invalid("tool_calling must be none, basic or parallel")
                        .with_detail("field", "tool_calling"),
                );
            }
            Some(_) => {}
        }
        self.check_pair(&o.provider, &o.model)?;
        let record = CapabilityRecord {
            provider: o.provider,
            model: o.model,
            source: CapabilitySource::OperatorOverride,
            declared: o.declared,
            note: o.note.filter(|n| !n.trim().is_empty()),
            updated_at: now_rfc3339(),
        };
        self.put_capability_record(&record).await?;
        Ok(record)
    }

    /// Removes the operator override of `provider`/`model`, or `not_found`.
    pub async fn delete_capability_override(self, provider: &str, model: &str) -> Result<()> {
        self.check_pair(provider, model)?;
        let existed = self
            .engine
            .store()
            .delete_capability(CapabilityKey {
                provider,
                model,
                source: CapabilitySource::OperatorOverride,
            })
            .await?;
        self.engine.inner.gateway.capabilities.forget();
        if existed {
            Ok(())
        } else {
            Err(HecateError::new(
                ErrorType::NotFound,
                format!("no capability override for {provider}/{model}"),
            ))
        }
    }

    /// Stores a record and drops the cache, so this process sees it at once.
    pub(super) async fn put_capability_record(self, record: &CapabilityRecord) -> Result<()> {
        self.engine.store().put_capability(record).await?;
        self.engine.inner.gateway.capabilities.forget();
        Ok(())
    }

    /// A provider and a model must both be named, the provider configured.
    pub(super) fn check_pair(self, provider: &str, model: &str) -> Result<()> {
        for (field, v) in [("provider", provider), ("model", model)] {
            if v.trim().is_empty() {
                return Err(HecateError::invalid(format!("{field} is required"))
                    .with_detail("field", field));
            }
        }
        if self.engine.inner.model.client(provider).is_none() {
            return Err(HecateError::new(
                ErrorType::NotFound,
                format!("no configured provider is named {provider:?}"),
            )
            .with_operator_action("Configure it under [providers.NAME], or name a configured one.")
            .with_detail("field", "provider"));
        }
        Ok(())
    }
}

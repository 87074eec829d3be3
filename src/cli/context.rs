//! Builds what every command needs from the global flags: configuration, the store
//! and the engine.

use super::GlobalArgs;
use crate::adapters::acp::agent::catalog::BUILTIN_MANIFESTS;
use crate::adapters::acp::{AcpOptions, Catalog, LauncherOptions, TerminalSandbox};
use crate::adapters::providers::pricing::Pricebook;
use crate::adapters::providers::{Embedder, ProviderClient};
use crate::config::Config;
use crate::engine::deferred::DeferredSettings;
use crate::engine::flows::{FlowCatalog, FlowSettings};
use crate::engine::memory::RecallSettings;
use crate::engine::{Engine, EngineConfig, Runtimes};
use crate::runtimes::a2a::A2aRuntime;
use crate::runtimes::external::{ExternalRuntime, GatewayAccess};
use crate::runtimes::model::ModelRuntime;
use crate::store::Store;
use crate::store::pool_settings::PoolSettings;
use anyhow::Context;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

pub use super::store_target::DB_FILE;
use super::store_target::StoreTarget;

/// Who decisions and starts made on the command line are recorded as (the
/// person at the hub's own terminal, holding the store's file).
pub const CLI_ACTOR: &str = "cli";

/// Configuration, store and engine for one command.
pub struct AppContext {
    /// Merged configuration.
    pub config: Config,
    /// The data directory (`:memory:` for the in-memory store).
    pub data_dir: PathBuf,
    /// The engine.
    pub engine: Engine,
    /// The namespace commands act in.
    pub namespace: String,
    /// The sandbox agent terminals run in (`[terminals]`).
    pub terminal_sandbox: TerminalSandbox,
}

/// The default config file path.
pub fn default_config_path() -> PathBuf {
    dirs::config_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("hecate")
        .join("config.toml")
}

/// The default data directory (XDG data dir on Linux).
pub fn default_data_dir() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("hecate")
}

/// Loads the configuration named by the flags.
pub fn load_config(cli: &GlobalArgs) -> anyhow::Result<Config> {
    let path = cli.config.clone().unwrap_or_else(default_config_path);
    let env: HashMap<String, String> = std::env::vars().collect();
    Ok(Config::load(&path, &env)?)
}

/// The data directory named by the flags (or the default).
pub fn data_dir(cli: &GlobalArgs) -> PathBuf {
    cli.data_dir.clone().unwrap_or_else(default_data_dir)
}

/// Opens (and migrates) the store the flags and `config` name: `--store`,
/// `HECATE_STORE_URL`, `[store] url`, else SQLite in the data directory.
pub async fn open_store(
    cli: &GlobalArgs,
    config: Option<&Config>,
) -> anyhow::Result<(PathBuf, Arc<dyn Store>)> {
    let (dir, _, store) = open_store_journalled(cli, config).await?;
    Ok((dir, store))
}

/// The size of a PostgreSQL store's pool: `[store] max_conns` and `max_idle`
/// under `HECATE_STORE_MAX_CONNS` and `HECATE_STORE_MAX_IDLE` (the defaults
/// without a config).
pub fn store_pool(config: Option<&Config>) -> anyhow::Result<PoolSettings> {
    let env: HashMap<String, String> = std::env::vars().collect();
    Ok(match config {
        Some(c) => c.store_pool(&env)?,
        None => PoolSettings::default(),
    })
}

/// `open_store`, with the directory of the store's journals (none for the
/// in-memory store).
async fn open_store_journalled(
    cli: &GlobalArgs,
    config: Option<&Config>,
) -> anyhow::Result<(PathBuf, Option<PathBuf>, Arc<dyn Store>)> {
    let dir = data_dir(cli);
    let target = StoreTarget::resolve(cli, config, &dir)?;
    let store = target.open(store_pool(config)?).await?;
    Ok((dir.clone(), target.journal_dir(&dir), store))
}

/// The agents' flows from `flows/` beside the config file, and the chat
/// identities; a flow file that does not load is logged (and its agent answers
/// `chat.flow_invalid`).
fn load_flows(config: &Config, env: &HashMap<String, String>) -> FlowSettings {
    let catalog = FlowCatalog::load_dir(&config.flows_dir());
    for e in catalog.errors() {
        tracing::warn!("flow file not loaded: {e}");
    }
    FlowSettings {
        catalog,
        access: config.chat_access(env),
    }
}

/// The recall settings `[memory]` selects, with the embeddings model's client.
fn recall_settings(
    config: &Config,
    providers: &[ProviderClient],
) -> anyhow::Result<RecallSettings> {
    let m = config.memory()?;
    let embedder = match &m.embeddings {
        None => None,
        Some((provider, model)) => {
            let client = providers
                .iter()
                .find(|c| &c.config().name == provider)
                .with_context(|| format!("[memory] embeddings provider {provider:?}"))?;
            Some(
                Embedder::new(client.clone(), model, m.dimensions)
                    .context("[memory] embeddings")?,
            )
        }
    };
    Ok(RecallSettings {
        embedder,
        batch_size: m.batch_size,
        batch_delay: m.batch_delay,
        default_recall: m.default_recall,
    })
}

impl AppContext {
    /// Builds configuration, store and engine (running startup reconciliation).
    pub async fn build(cli: &GlobalArgs) -> anyhow::Result<Self> {
        let config = load_config(cli)?;
        let (data_dir, journal_dir, store) = open_store_journalled(cli, Some(&config)).await?;
        let http = ProviderClient::default_http().context("building the HTTP client")?;
        let providers: Vec<ProviderClient> = config
            .providers
            .iter()
            .cloned()
            .map(|p| ProviderClient::new(http.clone(), p))
            .collect();
        let memory = recall_settings(&config, &providers)?;
        let model = ModelRuntime::new(providers, Pricebook::new(config.prices()));
        let env: HashMap<String, String> = std::env::vars().collect();
        let (catalog, manifest_errors) =
            Catalog::load(BUILTIN_MANIFESTS, Some(&config.adapters_dir()));
        for e in &manifest_errors {
            tracing::warn!("ignoring adapter manifest: {e}");
        }
        let agents = &config.file.agents;
        let terminal_sandbox = config.terminal_sandbox(&env)?;
        let acp_options = AcpOptions {
            terminal_sandbox: terminal_sandbox.clone(),
            ..config.acp_options()
        };
        let external = ExternalRuntime::new(
            catalog,
            LauncherOptions {
                cache_dir: agents.cache_dir.clone(),
                path: None,
            },
            env.clone(),
            config.agent_env(&env),
            acp_options,
        )
        .with_process_idle(config.agent_process_idle(&env)?)
        .with_manifest_errors(manifest_errors)
        .with_modes(agents.modes.clone().into_iter().collect())
        .with_gateway(
            agents
                .gateway
                .iter()
                .filter(|(_, on)| **on)
                .map(|(id, _)| id.clone())
                .collect(),
            config.agent_gateway_url()?.map(|url| {
                let token = std::env::var("HECATE_TOKEN")
                    .ok()
                    .or_else(|| config.file.server.token.clone())
                    .filter(|t| !t.is_empty());
                GatewayAccess::new(&url, token.as_deref())
            }),
        );
        for id in agents.gateway.keys() {
            if !external.has_adapter(id) {
                tracing::warn!(
                    "[agents.gateway] names {id:?}, which is not an adapter in the catalog"
                );
            }
        }
        let engine_config = EngineConfig {
            history: config.history()?,
            default_guardrails: config.guardrails(),
            external_output_cap_bytes: config.agent_output_cap(),
            approval_mode: config.approval_mode()?,
            approval_timeout: config.approval_timeout(),
            tasks: config.tasks(&env, &data_dir)?,
            gateway_default_model: config.gateway_default_model(&env),
            gateway_rate_limit_rpm: config.gateway_rate_limit_rpm(&env)?,
            gateway_routing: config.gateway_routing()?,
            flows: load_flows(&config, &env),
            lease_ttl_ms: config.session_lease_ms(&env)?,
            memory,
            deferred: DeferredSettings {
                journal_dir,
                gather: config.store_write_gather(),
            },
            ..EngineConfig::default()
        };
        let remote_agents = config.a2a_agents(&env)?;
        for a in remote_agents.iter().filter(|a| external.has_adapter(&a.id)) {
            tracing::warn!(
                "[a2a_agents.{}] shadows the ACP adapter of the same id",
                a.id
            );
        }
        let runtimes = Runtimes {
            model,
            external: Some(external),
        };
        let pool = config.mcp_pool()?;
        let (engine, _report) = Engine::start(store, runtimes, engine_config).await?;
        engine.mcp().configure_pool(pool);
        if !remote_agents.is_empty() {
            engine.attach_a2a(A2aRuntime::new(http.clone(), remote_agents));
        }
        Ok(Self {
            config,
            data_dir,
            engine,
            namespace: cli.namespace.clone(),
            terminal_sandbox,
        })
    }

    /// Logs, for a long-running command, whether agent terminals are confined
    /// and, when a sandbox is configured, whether bubblewrap can build it here
    /// (an error naming the fix when not: those terminals will be refused).
    pub async fn log_terminal_sandbox(&self) {
        let sandbox = &self.terminal_sandbox;
        if !sandbox.is_on() {
            tracing::info!("agent terminals are not confined ([terminals] sandbox = \"off\")");
            return;
        }
        match sandbox.check().await {
            Ok(bwrap) => tracing::info!(
                bwrap = %bwrap.display(),
                "agent terminals run in a bubblewrap sandbox ({})",
                sandbox.describe()
            ),
            Err(e) => tracing::error!("{e}"),
        }
    }
}

//! The configuration file's shape: one struct per TOML section, deserialized with
//! unknown keys rejected. Plain data; what the values mean is decided in `options.rs`
//! and `mod.rs`.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The file's shape.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// `[server]`.
    #[serde(default)]
    pub server: ServerSection,
    /// `[providers.NAME]`.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderSection>,
    /// `[history]`.
    #[serde(default)]
    pub history: HistorySection,
    /// `[guardrails]`.
    #[serde(default)]
    pub guardrails: GuardrailsSection,
    /// `[pricing."provider/model"]`.
    #[serde(default)]
    pub pricing: BTreeMap<String, PriceSection>,
    /// `[approvals]`.
    #[serde(default)]
    pub approvals: ApprovalsSection,
    /// `[agents]`.
    #[serde(default)]
    pub agents: AgentsSection,
    /// `[acp]`.
    #[serde(default)]
    pub acp: AcpSection,
    /// `[mcp_servers.NAME]`: upstream MCP servers aggregated by `hecate mcp`.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerSection>,
    /// `[mcp_pool]`: tunables of the upstream MCP client pool.
    #[serde(default)]
    pub mcp_pool: McpPoolSection,
    /// `[mcp]`: how Hecate's MCP server presents the aggregated tools.
    #[serde(default)]
    pub mcp: McpSection,
    /// `[tasks]`: the durable task runtime.
    #[serde(default)]
    pub tasks: TasksSection,
    /// `[terminals]`: the sandbox agent terminals run in.
    #[serde(default)]
    pub terminals: TerminalsSection,
    /// `[gateway]`: the OpenAI- and Anthropic-compatible `/v1` ingress.
    #[serde(default)]
    pub gateway: GatewaySection,
    /// `[chat]`: identities of the client-hosted chat API.
    #[serde(default)]
    pub chat: ChatSection,
    /// `[store]`: which database holds sessions, runs, tasks and the rest.
    #[serde(default)]
    pub store: StoreSection,
    /// `[memory]`: long-term recall (embeddings, batching, the default `recall`).
    #[serde(default)]
    pub memory: MemorySection,
    /// `[a2a_agents.NAME]`: remote A2A agents used as targets (`agent:NAME`).
    #[serde(default)]
    pub a2a_agents: BTreeMap<String, A2aAgentSection>,
}

/// `[a2a_agents.NAME]`: one remote A2A agent, declared by its card URL.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct A2aAgentSection {
    /// Where its agent card is served (`http(s)://…/.well-known/agent-card.json`).
    pub card_url: String,
    /// The display name (else the card's).
    pub name: Option<String>,
    /// The environment variable holding the bearer token sent to the agent.
    pub token_env: Option<String>,
    /// Seconds a card fetch may take (default 10).
    pub card_timeout_secs: Option<u64>,
    /// Seconds a request, or the gap between two streamed events, may take
    /// (default 300).
    pub request_timeout_secs: Option<u64>,
}

/// `[memory]`: long-term recall across sessions.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySection {
    /// The embeddings model as `provider/model` (an OpenAI-compatible provider);
    /// absent: recall is off and reports itself degraded.
    pub embeddings: Option<String>,
    /// Vector length to ask the model for (the request's `dimensions`).
    pub dimensions: Option<u32>,
    /// Messages embedded per request (default 32).
    pub batch_size: Option<usize>,
    /// How long the indexer gathers messages before a request (default 250 ms).
    pub batch_delay_ms: Option<u64>,
    /// Recalled messages injected into each turn of sessions created without
    /// their own `recall` (default 0: none).
    pub recall: Option<u32>,
}

/// `[chat]`: who may call the client-hosted chat operations besides anonymous
/// callers. Flows themselves live in `flows/` beside the config file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChatSection {
    /// `[chat.apps.ID]`: apps by id, each with its key.
    #[serde(default)]
    pub apps: BTreeMap<String, ChatAppSection>,
    /// `[chat.users.ID]`: users by id, each with its bearer token.
    #[serde(default)]
    pub users: BTreeMap<String, ChatUserSection>,
}

/// `[chat.apps.ID]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChatAppSection {
    /// The app key (`$VAR` reads the environment).
    pub key: String,
    /// Agents the app may use (all when absent).
    #[serde(default)]
    pub agents: Vec<String>,
}

/// `[chat.users.ID]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChatUserSection {
    /// The user's bearer token (`$VAR` reads the environment).
    pub token: String,
}

/// `[store]`: the store every command opens; `--store` and `HECATE_STORE_URL`
/// override it. Unset: SQLite in the data directory.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreSection {
    /// `postgres://USER:PASSWORD@HOST:PORT/DATABASE` (several replicas share one
    /// PostgreSQL database) or `sqlite:PATH`.
    pub url: Option<String>,
    /// Seconds a live session's owner lease lasts without renewal (default 30):
    /// how soon another replica may continue a session whose owner died.
    /// `HECATE_SESSION_LEASE_SECONDS` overrides it.
    pub session_lease_seconds: Option<u64>,
    /// Milliseconds the writer of gateway traces and MCP call records waits
    /// after each batch so that records arriving meanwhile share the next
    /// transaction (default 20). Records are journalled first, and a read of
    /// them waits for the writer, so this trades only write load for how soon
    /// other replicas see them.
    pub write_gather_ms: Option<u64>,
    /// Most connections a PostgreSQL store opens at once (default 16; 1 to
    /// 1000). `HECATE_STORE_MAX_CONNS` overrides it.
    pub max_conns: Option<u64>,
    /// Most of those kept open while unused (default: `max_conns`; 0 to
    /// `max_conns`). `HECATE_STORE_MAX_IDLE` overrides it.
    pub max_idle: Option<u64>,
}

/// `[gateway]`: the model gateway (`/v1/chat/completions`, `/v1/messages`,
/// `/v1/models`); `HECATE_GATEWAY_DEFAULT_MODEL` overrides the file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewaySection {
    /// The model a request that names none is routed to (`provider/model`, or a
    /// bare model one provider serves).
    pub default_model: Option<String>,
    /// Requests per minute `/v1` admits (a token bucket of that size); unset or 0
    /// is no limit. `HECATE_GATEWAY_RATE_LIMIT_RPM` overrides it.
    pub rate_limit_rpm: Option<u32>,
    /// `provider/model` patterns (`*` wildcards) the router never sends to
    /// (route candidates skipped as `policy_denied`).
    #[serde(default)]
    pub deny: Vec<String>,
    /// What `/v1` may spend per UTC day, in US dollars; once spent, priced
    /// candidates are skipped (`budget_denied`), and candidates without a price
    /// always are (`preflight_price_missing`). Unset: no budget.
    pub daily_budget_usd: Option<f64>,
    /// Seconds a provider is skipped after a 429 without `Retry-After`, or after
    /// its circuit opens (default 30).
    pub cooldown_secs: Option<u64>,
    /// Failures in a row (5xx, unreachable, key refused) that open a provider's
    /// circuit (default 3).
    pub circuit_failures: Option<u32>,
    /// Milliseconds between two reads of the cooldowns other processes on the
    /// store learnt (default 1000; at least 10).
    pub cooldown_sync_ms: Option<u64>,
    /// Milliseconds at or above which a provider's average answer time (sent
    /// to response headers, over its `/v1` answers) makes its readiness say
    /// `provider_slow` (default 10000). It stays routable.
    pub slow_provider_ms: Option<u64>,
}

/// `[terminals]`: how the commands of agent terminals (`terminal/create`) are
/// confined; every key is optional, and the environment (`HECATE_TERMINAL_SANDBOX`,
/// `HECATE_TERMINAL_NETWORK`, `HECATE_TERMINAL_BWRAP`) overrides the file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TerminalsSection {
    /// `off` (default: unconfined), `read_only` (everything read-only except the
    /// workspace and a private `/tmp`) or `workspace_only` (only the system
    /// directories, the workspace, a private `/tmp` and an empty home).
    pub sandbox: Option<String>,
    /// Whether terminal commands keep the network (default `true`); `false` runs
    /// them under bubblewrap without it, whatever `sandbox` says.
    pub network: Option<bool>,
    /// The bubblewrap binary (default: the first of `/usr/bin/bwrap`,
    /// `/usr/local/bin/bwrap`, `/bin/bwrap`).
    pub bwrap: Option<PathBuf>,
}

/// `[tasks]`: the task runtime's queue and gates; every key is optional, and the
/// environment (`HECATE_TASK_APPROVAL_POLICIES`, `HECATE_TASK_QUEUE_LEASE_SECONDS`,
/// `HECATE_TASK_QUEUE_WORKERS`, `HECATE_TASK_MAX_MCP_SERVERS_PER_TASK`,
/// `HECATE_TASK_SYSTEM_PROMPT`) overrides the file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TasksSection {
    /// Comma-separated approval gates (default `shell_exec,git_exec,file_write`;
    /// empty disables every gate; `all_tools` enables all).
    pub approval_policies: Option<String>,
    /// Seconds a worker's lease on a run lasts without renewal (default 30).
    pub lease_seconds: Option<u64>,
    /// Workers per `hecate serve` process (default 2).
    pub workers: Option<usize>,
    /// How often idle workers look for work queued by other processes, in
    /// milliseconds (default 500).
    pub poll_ms: Option<u64>,
    /// Most `mcp_servers` entries one task may name (default 16; 0 disables the
    /// check).
    pub max_mcp_servers_per_task: Option<u64>,
    /// The model of `agent_loop` tasks that name none (`provider/model`).
    pub default_model: Option<String>,
    /// The global layer of every `agent_loop` task's system prompt, before the
    /// profile's and the task's own (`""` leaves it out; unset: Hecate's own).
    pub system_prompt: Option<String>,
    /// URL patterns the agent's `http_request` tool may reach (`*` matches any
    /// run of characters); non-public addresses only through a pattern that
    /// names the host literally.
    #[serde(default)]
    pub http_allow: Option<Vec<String>>,
}

/// `[mcp]`: how Hecate's own MCP server (`hecate mcp`, `/mcp`) presents the
/// upstream tools it aggregates; `HECATE_MCP_TOOL_LOADING` overrides the file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpSection {
    /// `all` (default): `tools/list` holds every upstream tool; `search`: only
    /// Hecate's own tools, `search_tools` among them.
    pub tool_loading: Option<String>,
}

/// `[mcp_pool]`: the shared client pool of upstream MCP servers; every key is
/// optional (defaults: 300 s idle TTL, 256 entries, 60 s pings with a 5 s
/// deadline, 30 s bring-up, 200 ms before the one retry of a failed bring-up).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpPoolSection {
    /// An upstream connection nobody uses is closed after this many seconds (>= 1).
    pub idle_ttl_secs: Option<u64>,
    /// Soft cap on cached connections; idle ones are closed least recently used
    /// first (>= 1).
    pub max_entries: Option<usize>,
    /// Idle connections are pinged this often, in seconds (0 disables pings).
    pub ping_interval_secs: Option<u64>,
    /// Deadline of one idle ping, in seconds (1 to 300); a ping that fails or
    /// misses it evicts the connection.
    pub ping_timeout_secs: Option<u64>,
    /// Deadline of starting an upstream and its `initialize`, in seconds (>= 1).
    pub init_timeout_secs: Option<u64>,
    /// Wait before the one retry of a failed bring-up, in milliseconds (0 to 60,000).
    pub retry_delay_ms: Option<u64>,
}

/// `[mcp_servers.NAME]`: one upstream MCP server, over stdio (`command`, `args`,
/// `env`, `cwd`) or Streamable HTTP (`url`, `headers`); values may reference
/// `$VAR` / `${VAR}`, resolved when the server is started.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerSection {
    /// Program of a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment (added to the sanitized base environment).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory.
    pub cwd: Option<PathBuf>,
    /// URL of a Streamable HTTP server.
    pub url: Option<String>,
    /// Headers sent to an HTTP server.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `auto` (default), `require_approval` or `block`.
    pub policy: Option<String>,
    /// Per-tool policy overrides: `[mcp_servers.NAME.tools] write_file = "require_approval"`.
    #[serde(default)]
    pub tools: BTreeMap<String, String>,
    /// Deadline of one call in milliseconds (default 120000).
    pub timeout_ms: Option<u64>,
    /// `[mcp_servers.NAME.oauth]`: the OAuth client of an HTTP server's sign-in.
    pub oauth: Option<super::mcp_oauth::McpOAuthSection>,
}

/// `[acp]`: `hecate acp` defaults.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcpSection {
    /// Target for new editor threads: `model:PROVIDER/MODEL`, `agent:ADAPTER_ID`,
    /// `hecate:PROVIDER/MODEL` or `hecate`.
    pub default_target: Option<String>,
}

/// `[approvals]`: how permission requests are answered.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalsSection {
    /// `prompt` (default), `auto` or `deny`.
    pub mode: Option<String>,
    /// How long a prompted request waits, in milliseconds (default 300000).
    pub timeout_ms: Option<u64>,
    /// Resolved approvals older than this many days are deleted (default 30; 0
    /// keeps them regardless of age). Grants are never pruned by age.
    pub retention_days: Option<u64>,
    /// Only this many of the newest resolved approvals are kept (default 10000; 0
    /// keeps them regardless of count).
    pub retention_max: Option<u64>,
}

/// `[agents]`: external ACP agents.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsSection {
    /// Where managed agent packages are installed (default `<cache dir>/hecate`).
    pub cache_dir: Option<PathBuf>,
    /// A turn fails when the agent is silent this long, in milliseconds.
    pub idle_timeout_ms: Option<u64>,
    /// A turn fails when it runs longer than this, in milliseconds.
    pub turn_timeout_ms: Option<u64>,
    /// How long `initialize` / `session/new` may take, in milliseconds.
    pub start_timeout_ms: Option<u64>,
    /// After a cancel, how long to wait for the agent to end the turn, in milliseconds.
    pub cancel_grace_ms: Option<u64>,
    /// The text an agent streams in one turn (answer and reasoning) is kept up to
    /// this many bytes (default 1048576); the rest is dropped and the cut recorded.
    pub max_output_bytes: Option<u64>,
    /// An agent process no turn has used for this long is stopped, in
    /// milliseconds (default 1800000; 0 keeps them); its session reattaches on
    /// the next prompt. `HECATE_AGENT_PROCESS_IDLE_MS` overrides it.
    pub process_idle_ms: Option<u64>,
    /// The ACP session mode each agent is put into, by adapter id, over its
    /// manifest's `initial_mode`: `[agents.modes] codex = "auto"` lets Codex's own
    /// sandbox and reviewer decide instead of asking before every write.
    #[serde(default)]
    pub modes: BTreeMap<String, String>,
    /// Extra environment opted in per adapter: `[agents.env.codex] OPENAI_API_KEY = "$OPENAI_API_KEY"`.
    #[serde(default)]
    pub env: BTreeMap<String, BTreeMap<String, String>>,
    /// Agents whose model calls go through Hecate's own `/v1`, by adapter id:
    /// `[agents.gateway] claude_code = true` (how is in each manifest's `[gateway]`).
    #[serde(default)]
    pub gateway: BTreeMap<String, bool>,
    /// Where those agents reach `/v1` (`http://HOST:PORT`) when this process
    /// does not serve it itself; `hecate serve` hands them its own address.
    pub gateway_url: Option<String>,
}

/// Where `hecate serve` listens when neither `--listen` nor `[server] listen`
/// says.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8765";

/// `[server]`: the HTTP listener.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// Listen address, `127.0.0.1:8765` by default.
    pub listen: Option<String>,
    /// Bearer token required on API requests, when set.
    pub token: Option<String>,
    /// Deadline for a request's head (request line and headers), in seconds
    /// (default 10; 1 to 3600). Also closes keep-alive connections idle that long.
    pub header_read_timeout_secs: Option<u64>,
    /// Longest wait for the next part of a request body, in seconds (default 30;
    /// 1 to 3600); a body that stops arriving is answered 408.
    pub body_read_timeout_secs: Option<u64>,
    /// Most connections served at once, SSE streams included (default 1024, at
    /// least 1); more are answered 503 and closed.
    pub max_connections: Option<usize>,
    /// `[server.idp]`: the identity provider whose access tokens the server accepts.
    pub idp: Option<super::idp::IdpSection>,
}

/// `[providers.NAME]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSection {
    /// `openai` or `anthropic`.
    pub kind: Option<String>,
    /// Base URL.
    pub base_url: Option<String>,
    /// API key, literal or `$VAR`.
    pub api_key: Option<String>,
    /// Declared models.
    #[serde(default)]
    pub models: Vec<String>,
    /// Whether the router may use it (default `true`); `false` keeps it listed
    /// (with `provider_disabled`) but never routed to.
    /// `PROVIDER_<NAME>_ENABLED` overrides it.
    pub enabled: Option<bool>,
    /// The raw `PROVIDER_<NAME>_ENABLED` value, checked with the rest.
    #[serde(skip)]
    pub enabled_env: Option<String>,
    /// `[providers.NAME.capabilities."MODEL"]` (or `."*"` for every model):
    /// what the operator declares the models can do.
    #[serde(default)]
    pub capabilities: BTreeMap<String, CapabilitySection>,
}

/// `[providers.NAME.capabilities."MODEL"]`: declared model capabilities; each
/// key is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilitySection {
    /// `unknown`, `none`, `basic` or `parallel`.
    pub tool_calling: Option<String>,
    /// Whether answers can be streamed.
    pub streaming: Option<bool>,
    /// Whether it reads images.
    pub vision: Option<bool>,
    /// Its context window in tokens.
    pub max_context_tokens: Option<u64>,
    /// Whether it takes a reasoning effort (offered to editors as `thought_level`).
    pub reasoning: Option<bool>,
}

/// `[history]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistorySection {
    /// `buffer_window` (default), `summary_buffer` (alias `summary_checkpoint`) or
    /// `token_budget`.
    pub strategy: Option<String>,
    /// Window size for `buffer_window`.
    pub window: Option<usize>,
    /// Token budget for `token_budget` (a model's context size).
    pub max_tokens: Option<usize>,
    /// Messages between two summaries, for `summary_buffer` (default 20; 1 to
    /// 10,000).
    pub summarize_every: Option<u64>,
    /// Messages `summary_buffer` loads while a session has no summary yet
    /// (default 100; 1 to 10,000).
    pub max_messages: Option<usize>,
}

/// `[guardrails]`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardrailsSection {
    /// Turn limit per session.
    pub max_turns_per_session: Option<u32>,
    /// Wall-clock limit per session in milliseconds.
    pub max_session_duration_ms: Option<u64>,
    /// Idle limit between turns in milliseconds.
    pub idle_timeout_ms: Option<u64>,
}

/// `[pricing.KEY]` in USD per million tokens.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceSection {
    /// Input price.
    pub input_usd_per_mtok: f64,
    /// Output price.
    pub output_usd_per_mtok: f64,
}

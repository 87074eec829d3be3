//! The client pool: one live connection per resolved transport (the hash key
//! excludes the alias), shared by refcounted leases, closed after an idle TTL,
//! capped with LRU eviction of idle entries, pinged while idle, evicted on
//! transport errors, and brought up with one bounded retry.

use super::client::{Changed, Upstream};
use super::error::McpClientError;
use super::oauth::{OAuthSettings, OAuthTarget};
use super::spec::{ResolvedTransport, ServerSpec, sets_authorization};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio::sync::{OnceCell, broadcast};

/// Tunables of a pool.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// Soft cap on cached entries; idle entries are evicted least recently used first.
    pub max_entries: usize,
    /// An entry idle this long is closed.
    pub idle_ttl: Duration,
    /// How often idle entries are pinged (`ZERO` disables pinging).
    pub ping_interval: Duration,
    /// Deadline of one ping; failure or timeout evicts the entry.
    pub ping_timeout: Duration,
    /// Deadline of spawn plus `initialize`.
    pub init_timeout: Duration,
    /// Pause before the one retry of a failed bring-up.
    pub retry_delay: Duration,
}

impl Default for PoolOptions {
    fn default() -> Self {
        Self {
            max_entries: 256,
            idle_ttl: Duration::from_secs(300),
            ping_interval: Duration::from_secs(60),
            ping_timeout: Duration::from_secs(5),
            init_timeout: Duration::from_secs(30),
            retry_delay: Duration::from_millis(200),
        }
    }
}

/// A snapshot of the pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PoolStats {
    /// Cached connections.
    pub entries: usize,
    /// Sum of leases held (an entry used by two calls counts twice).
    pub in_use: usize,
    /// Entries nobody holds.
    pub idle: usize,
}

/// A cached connection with its bookkeeping.
#[derive(Debug)]
pub struct Entry {
    key: u64,
    upstream: Upstream,
    refs: AtomicUsize,
    last_used: Mutex<Instant>,
    last_ping: Mutex<Instant>,
    evicted: AtomicBool,
    /// Server names it was acquired under.
    names: Mutex<std::collections::BTreeSet<String>>,
    /// How many tools its last listing found.
    tool_count: Mutex<Option<usize>>,
}

impl Entry {
    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed()
    }
}

type Slot = Arc<OnceCell<Arc<Entry>>>;

struct Inner {
    opts: std::sync::RwLock<PoolOptions>,
    /// Wakes the reaper when the options change.
    retuned: Arc<tokio::sync::Notify>,
    base_env: Vec<(String, String)>,
    env: HashMap<String, String>,
    slots: Mutex<HashMap<u64, Slot>>,
    changes: broadcast::Sender<(u64, Changed)>,
    /// How HTTP upstreams sign in through OAuth, once the engine set it.
    oauth: std::sync::RwLock<Option<OAuthSettings>>,
}

/// The shared MCP client pool.
#[derive(Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

impl Inner {
    fn options(&self) -> PoolOptions {
        self.opts.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("stats", &self.stats())
            .finish()
    }
}

/// A held connection; the entry stays cached and counts as in use until dropped.
#[derive(Debug)]
pub struct Lease {
    entry: Arc<Entry>,
}

impl std::ops::Deref for Lease {
    type Target = Upstream;
    fn deref(&self) -> &Upstream {
        &self.entry.upstream
    }
}

impl Lease {
    /// The pool key of the connection.
    pub fn key(&self) -> u64 {
        self.entry.key
    }

    /// Records that the connection serves the server called `name` (shown in
    /// [`Pool::entries`]).
    pub fn name_as(&self, name: &str) {
        self.entry
            .names
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string());
    }

    /// Records how many tools a listing of the connection found.
    pub fn note_tool_count(&self, count: usize) {
        *self
            .entry
            .tool_count
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(count);
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.entry.touch();
        self.entry.refs.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Pool {
    /// A pool whose children start from `base_env` (already sanitized) and whose
    /// `$VAR` references resolve against `env`. Must be called inside a tokio
    /// runtime: it starts the background reaper.
    pub fn new(
        opts: PoolOptions,
        base_env: Vec<(String, String)>,
        env: HashMap<String, String>,
    ) -> Self {
        let (changes, _) = broadcast::channel(256);
        let inner = Arc::new(Inner {
            opts: std::sync::RwLock::new(opts),
            retuned: Arc::new(tokio::sync::Notify::new()),
            base_env,
            env,
            slots: Mutex::new(HashMap::new()),
            changes,
            oauth: std::sync::RwLock::new(None),
        });
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(reaper(Arc::downgrade(&inner)));
        }
        Self { inner }
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Slot>> {
        self.inner.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The pool's current tunables.
    pub fn options(&self) -> PoolOptions {
        self.inner.options()
    }

    /// Replaces the tunables; the next sweep (started now) applies them to the
    /// cached connections, later bring-ups use the new deadlines.
    pub fn set_options(&self, opts: PoolOptions) {
        *self.inner.opts.write().unwrap_or_else(|p| p.into_inner()) = opts;
        self.inner.retuned.notify_one();
    }

    /// Sets how HTTP upstreams sign in: an endpoint listed in `settings.names`
    /// whose configuration sends no `Authorization` header of its own uses the
    /// sign-in stored under that name.
    pub fn set_oauth(&self, settings: OAuthSettings) {
        *self.inner.oauth.write().unwrap_or_else(|p| p.into_inner()) = Some(settings);
    }

    /// The sign-in an HTTP transport uses, if any.
    fn oauth_target(&self, transport: &ResolvedTransport) -> Option<OAuthTarget> {
        let ResolvedTransport::Http { url, headers } = transport else {
            return None;
        };
        if sets_authorization(headers.iter().map(|(k, _)| k)) {
            return None;
        }
        let settings = self.inner.oauth.read().unwrap_or_else(|p| p.into_inner());
        let settings = settings.as_ref()?;
        settings.target(url)
    }

    /// Resolves `spec` (secret references) into the transport to spawn or dial.
    pub fn resolve(&self, spec: &ServerSpec) -> Result<ResolvedTransport, McpClientError> {
        spec.resolve(&self.inner.env)
    }

    /// List changes of every cached connection, tagged with its pool key.
    pub fn changes(&self) -> broadcast::Receiver<(u64, Changed)> {
        self.inner.changes.subscribe()
    }

    /// A lease on the connection for `spec`, bringing it up (with one retry) when
    /// it is not cached; `init_timeout` bounds each bring-up attempt (the pool's
    /// default when absent).
    pub async fn acquire(
        &self,
        spec: &ServerSpec,
        init_timeout: Option<Duration>,
    ) -> Result<Lease, McpClientError> {
        let transport = self.resolve(spec)?;
        let init_timeout = init_timeout.unwrap_or(self.options().init_timeout);
        let key = transport.key();
        loop {
            let slot = self.slots().entry(key).or_default().clone();
            let result = slot
                .get_or_try_init(|| self.bring_up(&transport, key, init_timeout))
                .await
                .cloned();
            match result {
                Ok(entry)
                    if entry.evicted.load(Ordering::Acquire) || entry.upstream.is_closed() =>
                {
                    self.evict_entry(&entry);
                    continue;
                }
                Ok(entry) => {
                    entry.refs.fetch_add(1, Ordering::AcqRel);
                    entry.touch();
                    return Ok(Lease { entry });
                }
                Err(e) => {
                    let mut slots = self.slots();
                    if slots.get(&key).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
                        slots.remove(&key);
                    }
                    return Err(e);
                }
            }
        }
    }

    async fn bring_up(
        &self,
        transport: &ResolvedTransport,
        key: u64,
        init_timeout: Duration,
    ) -> Result<Arc<Entry>, McpClientError> {
        let opts = self.options();
        let oauth = self.oauth_target(transport);
        let connect = || {
            Upstream::connect_signed_in(
                transport,
                &self.inner.base_env,
                init_timeout,
                oauth.as_ref(),
            )
        };
        let upstream = match connect().await {
            Ok(u) => u,
            Err(e) if e.is_retryable() => {
                tracing::warn!(upstream = %transport.label(), error = %e, "MCP upstream bring-up failed; retrying once");
                tokio::time::sleep(opts.retry_delay).await;
                connect().await?
            }
            Err(e) => return Err(e),
        };
        let mut changes = upstream.changes();
        let tx = self.inner.changes.clone();
        tokio::spawn(async move {
            loop {
                match changes.recv().await {
                    Ok(c) => {
                        let _ = tx.send((key, c));
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let _ = tx.send((key, Changed::Tools));
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
        });
        let now = Instant::now();
        let entry = Arc::new(Entry {
            key,
            upstream,
            refs: AtomicUsize::new(0),
            last_used: Mutex::new(now),
            last_ping: Mutex::new(now),
            evicted: AtomicBool::new(false),
            names: Mutex::new(Default::default()),
            tool_count: Mutex::new(None),
        });
        tracing::info!(upstream = %transport.label(), pid = ?entry.upstream.pid(), "MCP upstream connected");
        self.enforce_cap(key);
        Ok(entry)
    }

    /// Evicts idle entries, least recently used first, while over the cap (never
    /// the entry being added, never one in use).
    fn enforce_cap(&self, adding: u64) {
        let cap = self.options().max_entries.max(1);
        let mut victims = Vec::new();
        {
            let slots = self.slots();
            let count = slots.len();
            if count <= cap {
                return;
            }
            let mut idle: Vec<Arc<Entry>> = slots
                .iter()
                .filter(|(k, _)| **k != adding)
                .filter_map(|(_, s)| s.get().cloned())
                .filter(|e| e.refs.load(Ordering::Acquire) == 0)
                .collect();
            idle.sort_by_key(|e| std::cmp::Reverse(e.idle_for()));
            victims.extend(idle.into_iter().take(count - cap));
        }
        for v in victims {
            self.evict_entry(&v);
        }
    }

    /// Drops the connection behind `lease` from the cache and closes it (after a
    /// transport error); other holders see their calls fail.
    pub fn evict(&self, lease: &Lease) {
        self.evict_entry(&lease.entry);
    }

    fn evict_entry(&self, entry: &Arc<Entry>) {
        entry.evicted.store(true, Ordering::Release);
        {
            let mut slots = self.slots();
            if slots
                .get(&entry.key)
                .and_then(|s| s.get())
                .is_some_and(|e| Arc::ptr_eq(e, entry))
            {
                slots.remove(&entry.key);
            }
        }
        tracing::info!(upstream = %entry.upstream.label(), "MCP upstream evicted");
        entry.upstream.shutdown();
    }

    /// Entries, leases held and idle entries.
    pub fn stats(&self) -> PoolStats {
        let slots = self.slots();
        let entries: Vec<Arc<Entry>> = slots.values().filter_map(|s| s.get().cloned()).collect();
        let in_use = entries.iter().map(|e| e.refs.load(Ordering::Acquire)).sum();
        let idle = entries
            .iter()
            .filter(|e| e.refs.load(Ordering::Acquire) == 0)
            .count();
        PoolStats {
            entries: entries.len(),
            in_use,
            idle,
        }
    }

    /// Every cached connection, most recently used first.
    pub fn entries(&self) -> Vec<EntryInfo> {
        let entries: Vec<Arc<Entry>> = self
            .slots()
            .values()
            .filter_map(|s| s.get().cloned())
            .collect();
        let mut out: Vec<(Duration, EntryInfo)> = entries
            .iter()
            .map(|e| {
                let in_use = e.refs.load(Ordering::Acquire);
                let idle = e.idle_for();
                let info = EntryInfo {
                    servers: e
                        .names
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .iter()
                        .cloned()
                        .collect(),
                    transport: if e.upstream.pid().is_some() {
                        "stdio"
                    } else {
                        "http"
                    },
                    target: crate::domain::redact::redact_url(e.upstream.label()),
                    in_use,
                    idle_ms: (in_use == 0).then_some(idle.as_millis() as u64),
                    tool_count: *e.tool_count.lock().unwrap_or_else(|p| p.into_inner()),
                    pid: e.upstream.pid(),
                };
                (idle, info)
            })
            .collect();
        out.sort_by_key(|(idle, _)| *idle);
        out.into_iter().map(|(_, i)| i).collect()
    }

    /// Brings `spec` up outside the cache, lists its tools and closes it; a
    /// failure says at which stage it happened.
    pub async fn probe(
        &self,
        spec: &ServerSpec,
        timeout: Duration,
    ) -> Result<McpProbe, ProbeFailure> {
        let staged = |stage: ProbeStage| move |error| ProbeFailure { stage, error };
        let transport = self.resolve(spec).map_err(staged(ProbeStage::Resolve))?;
        let oauth = self.oauth_target(&transport);
        let upstream =
            Upstream::connect_signed_in(&transport, &self.inner.base_env, timeout, oauth.as_ref())
                .await
                .map_err(staged(ProbeStage::Start))?;
        let tools = upstream.list_tools(timeout).await;
        let server = upstream.server_info();
        upstream.shutdown();
        Ok(McpProbe {
            server,
            tools: tools.map_err(staged(ProbeStage::ListTools))?,
        })
    }

    /// One pass of the reaper: closes entries idle past the TTL and pings the rest.
    pub async fn sweep(&self) {
        let opts = self.options();
        let idle: Vec<Arc<Entry>> = self
            .slots()
            .values()
            .filter_map(|s| s.get().cloned())
            .filter(|e| e.refs.load(Ordering::Acquire) == 0)
            .collect();
        for entry in idle {
            if entry.idle_for() >= opts.idle_ttl || entry.upstream.is_closed() {
                self.evict_entry(&entry);
                continue;
            }
            if opts.ping_interval.is_zero() {
                continue;
            }
            let due = {
                let last = entry.last_ping.lock().unwrap_or_else(|p| p.into_inner());
                last.elapsed() >= opts.ping_interval
            };
            if due {
                *entry.last_ping.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
                if let Err(e) = entry.upstream.ping(opts.ping_timeout).await {
                    tracing::warn!(upstream = %entry.upstream.label(), error = %e, "idle MCP upstream failed its ping");
                    self.evict_entry(&entry);
                }
            }
        }
    }
}

/// One cached connection as [`Pool::entries`] shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntryInfo {
    /// Server names it was acquired under (configured or per-task aliases).
    pub servers: Vec<String>,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// The program or the URL (credentials redacted).
    pub target: String,
    /// Leases held now.
    pub in_use: usize,
    /// How long nobody has held it, in milliseconds (absent while in use).
    pub idle_ms: Option<u64>,
    /// Tools its last listing found, when it was listed.
    pub tool_count: Option<usize>,
    /// The child's process id (stdio).
    pub pid: Option<u32>,
}

/// The stage of a probe that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeStage {
    /// Resolving the definition and its `$VAR` references.
    Resolve,
    /// Spawning or dialling the server and the `initialize` handshake.
    Start,
    /// `tools/list`.
    ListTools,
}

impl ProbeStage {
    /// The wire name: `resolve`, `start` or `tools_list`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Resolve => "resolve",
            Self::Start => "start",
            Self::ListTools => "tools_list",
        }
    }
}

/// Why a probe failed, and at which stage.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{} failed: {error}", stage.as_str())]
pub struct ProbeFailure {
    /// Where it failed.
    pub stage: ProbeStage,
    /// What failed.
    pub error: McpClientError,
}

/// What a probe found.
#[derive(Debug, Clone, Serialize)]
pub struct McpProbe {
    /// The server's `serverInfo`.
    pub server: serde_json::Value,
    /// Its tools, un-namespaced, with schemas verbatim.
    pub tools: Vec<serde_json::Value>,
}

async fn reaper(inner: Weak<Inner>) {
    loop {
        let (every, retuned) = match inner.upgrade() {
            Some(i) => {
                let o = i.options();
                let base = if o.ping_interval.is_zero() {
                    o.idle_ttl
                } else {
                    o.ping_interval.min(o.idle_ttl)
                };
                let notify = i.retuned.clone();
                let retuned = async move { notify.notified().await };
                ((base / 2).max(Duration::from_millis(50)), retuned)
            }
            None => return,
        };
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = retuned => {}
        }
        match inner.upgrade() {
            Some(i) => Pool { inner: i }.sweep().await,
            None => return,
        }
    }
}

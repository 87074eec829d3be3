//! Posting push notifications: one worker task per registered webhook takes
//! the task's notifications in order from a bounded queue and posts each
//! (`Content-Type: application/a2a+json`, the config's token in
//! `X-A2A-Notification-Token`, its authentication as `Authorization`), each
//! attempt within a time limit, a failed one retried with a growing pause a few
//! times. Nothing here waits on the turn or makes it wait: queueing never
//! blocks, and a notification that cannot be delivered is logged (the task,
//! the config and the webhook's scheme, host and port; never its path, token or
//! credentials) and dropped. The HTTP client follows no redirects and refuses
//! host names that resolve only to link-local, multicast or unspecified
//! addresses.

use super::validate::{allowed_ip, shown};
use crate::a2a_wire::{
    NOTIFICATION_CONTENT_TYPE, NOTIFICATION_TOKEN_HEADER, TaskPushNotificationConfig,
};
use crate::bridges::a2a::error::A2aError;
use axum::body::Bytes;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long one delivery attempt may take (the specification recommends 10
/// to 30 seconds).
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long connecting to a webhook may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Attempts per notification (the first and its retries).
const ATTEMPTS: u32 = 4;
/// The pause before the first retry; each further retry waits twice as long.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// Notifications a webhook's queue holds before new ones are dropped.
const QUEUE: usize = 64;

/// Builds the webhook HTTP client on first use and starts delivery workers.
#[derive(Default)]
pub struct Notifier {
    client: OnceLock<Result<reqwest::Client, String>>,
}

impl Notifier {
    /// Builds the client now, so that a config that passed its checks can be
    /// registered later without failing.
    pub fn ready(&self) -> Result<(), A2aError> {
        self.client().map(|_| ())
    }

    /// Starts the worker delivering to `config`'s webhook; answers the queue
    /// that feeds it.
    pub fn start(&self, config: &TaskPushNotificationConfig) -> Result<Queue, A2aError> {
        let client = self.client()?;
        let target = Target::new(config)?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let stop = Arc::new(AtomicBool::new(false));
        tokio::spawn(run(client, target, rx, stop.clone()));
        Ok(Queue { tx: Some(tx), stop })
    }

    /// The shared client, built once (like the providers' client, with a
    /// connect limit) with an attempt limit, no redirects and the guarded
    /// resolver.
    fn client(&self) -> Result<reqwest::Client, A2aError> {
        let built = self.client.get_or_init(|| {
            reqwest::Client::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .timeout(ATTEMPT_TIMEOUT)
                .redirect(reqwest::redirect::Policy::none())
                .dns_resolver(GuardedResolver)
                .build()
                .map_err(|e| e.to_string())
        });
        built
            .clone()
            .map_err(|e| A2aError::Internal(format!("the push notification client: {e}")))
    }
}

/// The feed of one webhook's worker. Dropping it lets the worker deliver what
/// is queued and end; [`Queue::stop`] also drops what is still queued.
#[derive(Debug)]
pub struct Queue {
    tx: Option<mpsc::Sender<Bytes>>,
    stop: Arc<AtomicBool>,
}

impl Queue {
    /// Queues `body` without waiting; answers false when the queue is full
    /// or closed (the notification is dropped).
    pub fn offer(&self, body: Bytes) -> bool {
        self.tx.as_ref().is_some_and(|tx| tx.try_send(body).is_ok())
    }

    /// Whether it still takes notifications.
    pub fn is_open(&self) -> bool {
        self.tx.is_some()
    }

    /// Takes no more notifications; what is queued is still delivered.
    pub fn close(&mut self) {
        self.tx = None;
    }

    /// Takes no more notifications and drops what is queued or being retried.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.tx = None;
    }
}

/// Where and how one webhook is called.
struct Target {
    task_id: String,
    config_id: String,
    url: reqwest::Url,
    /// `scheme://host:port`, for logs.
    shown: String,
    headers: HeaderMap,
}

impl Target {
    fn new(config: &TaskPushNotificationConfig) -> Result<Self, A2aError> {
        let bad = |what: &str| A2aError::InvalidParams(format!("invalid push notification {what}"));
        let url = reqwest::Url::parse(&config.url).map_err(|_| bad("url"))?;
        let mut headers = HeaderMap::new();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static(NOTIFICATION_CONTENT_TYPE),
        );
        if let Some(token) = &config.token {
            let mut value = HeaderValue::from_str(token).map_err(|_| bad("token"))?;
            value.set_sensitive(true);
            headers.insert(HeaderName::from_static(NOTIFICATION_TOKEN_HEADER), value);
        }
        if let Some(auth) = &config.authentication {
            let mut value = HeaderValue::from_str(&format!("{} {}", auth.scheme, auth.credentials))
                .map_err(|_| bad("authentication"))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(Self {
            task_id: config.task_id.clone(),
            config_id: config.id.clone(),
            shown: shown(&url),
            url,
            headers,
        })
    }
}

/// Delivers the queued notifications in order until the queue closes or the
/// config is deleted.
async fn run(
    client: reqwest::Client,
    target: Target,
    mut rx: mpsc::Receiver<Bytes>,
    stop: Arc<AtomicBool>,
) {
    while let Some(body) = rx.recv().await {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        deliver(&client, &target, body, &stop).await;
    }
}

/// What one attempt came to.
enum Attempt {
    /// The webhook took it (2xx).
    Delivered,
    /// Worth another try (no answer, a timeout, 408, 429 or 5xx).
    Retry(String),
    /// The webhook refused it for good (another status).
    Refused(String),
}

/// Posts one notification, retrying as the schedule allows.
async fn deliver(client: &reqwest::Client, target: &Target, body: Bytes, stop: &AtomicBool) {
    let mut pause = FIRST_BACKOFF;
    for attempt in 1..=ATTEMPTS {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let why = match post(client, target, body.clone()).await {
            Attempt::Delivered => {
                tracing::debug!(
                    task_id = %target.task_id,
                    config_id = %target.config_id,
                    webhook = %target.shown,
                    attempt,
                    "A2A push notification delivered"
                );
                return;
            }
            Attempt::Refused(why) => {
                tracing::warn!(
                    task_id = %target.task_id,
                    config_id = %target.config_id,
                    webhook = %target.shown,
                    attempt,
                    error = %why,
                    "A2A push notification refused by the webhook; not retried"
                );
                return;
            }
            Attempt::Retry(why) => why,
        };
        if attempt == ATTEMPTS {
            tracing::warn!(
                task_id = %target.task_id,
                config_id = %target.config_id,
                webhook = %target.shown,
                attempts = ATTEMPTS,
                error = %why,
                "A2A push notification not delivered; dropped"
            );
            return;
        }
        tracing::debug!(
            task_id = %target.task_id,
            config_id = %target.config_id,
            webhook = %target.shown,
            attempt,
            error = %why,
            "A2A push notification failed; retrying"
        );
        tokio::time::sleep(pause).await;
        pause *= 2;
    }
}

/// One attempt.
async fn post(client: &reqwest::Client, target: &Target, body: Bytes) -> Attempt {
    let sent = client
        .post(target.url.clone())
        .headers(target.headers.clone())
        .body(body)
        .send()
        .await;
    match sent {
        Ok(resp) if resp.status().is_success() => Attempt::Delivered,
        Ok(resp) => {
            let status = resp.status();
            let why = format!("HTTP {}", status.as_u16());
            if status.is_server_error()
                || status == reqwest::StatusCode::REQUEST_TIMEOUT
                || status == reqwest::StatusCode::TOO_MANY_REQUESTS
            {
                Attempt::Retry(why)
            } else {
                Attempt::Refused(why)
            }
        }
        Err(e) => Attempt::Retry(error_text(e)),
    }
}

/// A transport error's words without its URL, with its causes.
fn error_text(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut words = e.to_string();
    let mut cause = std::error::Error::source(&e);
    while let Some(c) = cause {
        words.push_str(": ");
        words.push_str(&c.to_string());
        cause = c.source();
    }
    words
}

/// Resolves webhook host names with the system resolver, keeping only the
/// addresses a webhook may use.
struct GuardedResolver;

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| allowed_ip(a.ip()))
                .collect();
            if found.is_empty() {
                return Err(format!(
                    "{host} resolves to no address a webhook may use (link-local, multicast \
                     and unspecified addresses are refused)"
                )
                .into());
            }
            let addrs: reqwest::dns::Addrs = Box::new(found.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a_wire::AuthenticationInfo;
    use axum::http::StatusCode;
    use std::sync::atomic::AtomicUsize;

    /// A webhook answering `statuses` in turn (then 200), counting the posts.
    async fn webhook(statuses: Vec<u16>) -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        let count = Arc::new(AtomicUsize::new(0));
        let seen = count.clone();
        let app = axum::Router::new().fallback(move || {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            let status = statuses.get(n).copied().unwrap_or(200);
            async move { StatusCode::from_u16(status).unwrap_or(StatusCode::OK) }
        });
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        (url, count)
    }

    fn target(url: &str) -> Target {
        Target::new(&TaskPushNotificationConfig {
            id: "c".into(),
            task_id: "t".into(),
            url: url.into(),
            ..TaskPushNotificationConfig::default()
        })
        .expect("target")
    }

    fn client() -> reqwest::Client {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Notifier::default().client().expect("client")
    }

    #[tokio::test]
    async fn a_server_error_is_retried_and_a_refusal_is_not() {
        let stop = AtomicBool::new(false);
        let (url, count) = webhook(vec![503]).await;
        deliver(&client(), &target(&url), Bytes::from_static(b"{}"), &stop).await;
        assert_eq!(count.load(Ordering::SeqCst), 2, "503 then 200");
        let (url, count) = webhook(vec![404]).await;
        deliver(&client(), &target(&url), Bytes::from_static(b"{}"), &stop).await;
        assert_eq!(count.load(Ordering::SeqCst), 1, "404 is final");
        stop.store(true, Ordering::Relaxed);
        let (url, count) = webhook(Vec::new()).await;
        deliver(&client(), &target(&url), Bytes::from_static(b"{}"), &stop).await;
        assert_eq!(
            count.load(Ordering::SeqCst),
            0,
            "a deleted config posts nothing"
        );
    }

    #[test]
    fn a_target_carries_the_token_and_the_authentication_as_sensitive_headers() {
        let t = Target::new(&TaskPushNotificationConfig {
            id: "c".into(),
            task_id: "t".into(),
            url: "https://hooks.example.com/secret/path".into(),
            token: Some("tok".into()),
            authentication: Some(AuthenticationInfo {
                scheme: "Bearer".into(),
                credentials: "cred".into(),
            }),
            ..TaskPushNotificationConfig::default()
        })
        .expect("target");
        assert_eq!(t.headers[NOTIFICATION_TOKEN_HEADER], "tok");
        assert!(t.headers[NOTIFICATION_TOKEN_HEADER].is_sensitive());
        assert_eq!(t.headers[AUTHORIZATION], "Bearer cred");
        assert_eq!(t.headers[CONTENT_TYPE], "application/a2a+json");
        assert_eq!(t.shown, "https://hooks.example.com:443");
    }

    #[test]
    fn a_closed_queue_takes_nothing() {
        let (tx, _rx) = mpsc::channel(1);
        let mut q = Queue {
            tx: Some(tx),
            stop: Arc::new(AtomicBool::new(false)),
        };
        assert!(q.offer(Bytes::from_static(b"{}")));
        assert!(!q.offer(Bytes::from_static(b"{}")), "full");
        q.close();
        assert!(!q.is_open());
        assert!(!q.offer(Bytes::from_static(b"{}")));
    }
}

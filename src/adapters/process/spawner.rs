//! One thread that lives as long as Hecate and performs every supervised fork.
//! Linux sends `PR_SET_PDEATHSIG` when the *thread* that forked the child exits,
//! not the process: a child forked on a tokio blocking-pool thread (retired after
//! ten idle seconds) or on a worker retired by `block_in_place` would be killed
//! while Hecate still runs. Forking here makes "parent died" mean "Hecate died".

use std::io;
use std::sync::OnceLock;
use std::sync::mpsc;

type Job = Box<dyn FnOnce() + Send>;

fn jobs() -> Option<&'static mpsc::Sender<Job>> {
    static JOBS: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();
    JOBS.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("hecate-spawner".into())
            .spawn(move || {
                for job in rx {
                    job();
                }
            });
        match started {
            Ok(_) => Some(tx),
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the spawner thread; forking in place");
                None
            }
        }
    })
    .as_ref()
}

/// Spawns `cmd` on the spawner thread (inside the caller's tokio runtime, so the
/// child's pipes and exit are driven by it) and returns the child.
pub(super) fn spawn(mut cmd: tokio::process::Command) -> io::Result<tokio::process::Child> {
    let runtime = tokio::runtime::Handle::try_current().ok();
    let (reply_tx, reply_rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _entered = runtime.as_ref().map(tokio::runtime::Handle::enter);
        let _ = reply_tx.send(cmd.spawn());
    });
    match jobs() {
        Some(tx) => {
            if let Err(mpsc::SendError(job)) = tx.send(job) {
                job();
            }
        }
        None => job(),
    }
    reply_rx
        .recv()
        .unwrap_or_else(|_| Err(io::Error::other("the spawner thread is gone")))
}

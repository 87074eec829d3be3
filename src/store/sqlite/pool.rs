//! The threads behind the SQLite store: one writer connection on its own OS thread,
//! and a pool of reader connections on theirs, each fed jobs over a channel. A job
//! is a closure on the connection; its answer comes back through a oneshot, so the
//! async side never waits on SQLite. The writer connection sits behind a mutex its
//! thread takes per job, so a caller may borrow it while it is free
//! ([`Pool::try_writer`]); the WAL is then checkpointed on the writer thread,
//! never on a caller's.

use rusqlite::Connection;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// One unit of work on a connection.
pub(crate) type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// Writes between two WAL checkpoints queued on the writer thread: a model
/// turn's writes add about 30 pages to the WAL (measured), ten a write, so
/// this checkpoints about as often as SQLite's own 1,000-page automatic one.
const CHECKPOINT_EVERY: u64 = 100;

/// The job queues of a store and the threads that drain them.
pub(crate) struct Pool {
    writer: Option<Sender<Job>>,
    readers: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
    /// The writer connection, taken by its thread for each job.
    writer_conn: Arc<Mutex<Connection>>,
    /// Writes so far, to queue a checkpoint every [`CHECKPOINT_EVERY`].
    writes: AtomicU64,
    /// Jobs queued for the writer thread and not done yet: while there are
    /// some, no caller borrows the connection, so queued work is never
    /// overtaken for long.
    queued: Arc<AtomicUsize>,
}

impl Pool {
    /// Starts the writer thread on `writer` and one reader thread per connection in
    /// `readers`; with no readers, reads run on the writer.
    pub(crate) fn start(
        writer: Connection,
        readers: Vec<Connection>,
        name: &str,
    ) -> std::io::Result<Self> {
        let mut threads = Vec::with_capacity(readers.len() + 1);
        let (wtx, wrx) = channel::<Job>();
        let writer_conn = Arc::new(Mutex::new(writer));
        let queued = Arc::new(AtomicUsize::new(0));
        threads.push(spawn(
            format!("{name}-writer"),
            writer_conn.clone(),
            Arc::new(Mutex::new(wrx)),
            Some(queued.clone()),
        )?);
        let readers = if readers.is_empty() {
            None
        } else {
            let (rtx, rrx) = channel::<Job>();
            let shared = Arc::new(Mutex::new(rrx));
            for (i, conn) in readers.into_iter().enumerate() {
                let conn = Arc::new(Mutex::new(conn));
                threads.push(spawn(
                    format!("{name}-reader-{i}"),
                    conn,
                    shared.clone(),
                    None,
                )?);
            }
            Some(rtx)
        };
        Ok(Self {
            writer: Some(wtx),
            readers,
            threads,
            writer_conn,
            writes: AtomicU64::new(0),
            queued,
        })
    }

    /// Queues a job for the writer; `false` when the writer has stopped.
    pub(crate) fn write(&self, job: Job) -> bool {
        self.wrote();
        self.send_write(job)
    }

    fn send_write(&self, job: Job) -> bool {
        self.queued.fetch_add(1, Ordering::SeqCst);
        let sent = self.writer.as_ref().is_some_and(|w| w.send(job).is_ok());
        if !sent {
            self.queued.fetch_sub(1, Ordering::SeqCst);
        }
        sent
    }

    /// The writer connection when neither its thread nor another caller holds
    /// it and no job waits for it on the writer thread; the caller's write
    /// counts toward the next checkpoint.
    pub(crate) fn try_writer(&self) -> Option<MutexGuard<'_, Connection>> {
        if self.queued.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let conn = self.writer_conn.try_lock().ok()?;
        self.wrote();
        Some(conn)
    }

    /// Jobs queued for the writer thread and not done yet.
    #[cfg(test)]
    pub(crate) fn queued_jobs(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }

    /// Counts a write and, every [`CHECKPOINT_EVERY`], queues a passive WAL
    /// checkpoint on the writer thread (the connection's own automatic one is
    /// off, so that it never runs on a caller's thread).
    fn wrote(&self) {
        if self.writes.fetch_add(1, Ordering::Relaxed) % CHECKPOINT_EVERY == CHECKPOINT_EVERY - 1 {
            self.send_write(Box::new(|c| {
                if let Err(e) = c.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                    tracing::warn!(error = %e, "WAL checkpoint failed");
                }
            }));
        }
    }

    /// Queues a job for the first free reader (the writer when there are no
    /// readers); `false` when its thread has stopped.
    pub(crate) fn read(&self, job: Job) -> bool {
        match &self.readers {
            Some(r) => r.send(job).is_ok(),
            None => self.send_write(job),
        }
    }

    /// Number of reader connections (0 when reads run on the writer).
    pub(crate) fn reader_count(&self) -> usize {
        self.threads.len().saturating_sub(1)
    }
}

impl Drop for Pool {
    /// Closes the queues and waits for the threads to finish what was queued, so
    /// every accepted write is done and every connection closed once the store is.
    fn drop(&mut self) {
        self.writer = None;
        self.readers = None;
        let me = std::thread::current().id();
        for t in self.threads.drain(..) {
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}

/// Spawns a thread that runs jobs from `queue` on `conn` until the queue closes,
/// counting each one done off `queued` when given. A panicking job is
/// contained: its caller sees the answer channel dropped.
fn spawn(
    name: String,
    conn: Arc<Mutex<Connection>>,
    queue: Arc<Mutex<Receiver<Job>>>,
    queued: Option<Arc<AtomicUsize>>,
) -> std::io::Result<JoinHandle<()>> {
    let thread_name = name.clone();
    let body = move || {
        loop {
            let job = {
                let rx = queue.lock().unwrap_or_else(|p| p.into_inner());
                rx.recv()
            };
            let Ok(job) = job else { break };
            let mut conn = conn.lock().unwrap_or_else(|p| p.into_inner());
            if std::panic::catch_unwind(AssertUnwindSafe(|| job(&mut conn))).is_err() {
                tracing::error!(thread = %thread_name, "a store job panicked");
            }
            drop(conn);
            if let Some(q) = &queued {
                q.fetch_sub(1, Ordering::SeqCst);
            }
        }
    };
    std::thread::Builder::new().name(name).spawn(body)
}

//! The threads behind the SQLite store: one writer connection on its own OS thread,
//! and a pool of reader connections on theirs, each fed jobs over a channel. A job
//! is a closure on the connection; its answer comes back through a oneshot, so the
//! async side never blocks a runtime thread on SQLite.

use rusqlite::Connection;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// One unit of work on a connection.
pub(crate) type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// The job queues of a store and the threads that drain them.
pub(crate) struct Pool {
    writer: Option<Sender<Job>>,
    readers: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
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
        threads.push(spawn(
            format!("{name}-writer"),
            writer,
            Arc::new(Mutex::new(wrx)),
        )?);
        let readers = if readers.is_empty() {
            None
        } else {
            let (rtx, rrx) = channel::<Job>();
            let shared = Arc::new(Mutex::new(rrx));
            for (i, conn) in readers.into_iter().enumerate() {
                threads.push(spawn(format!("{name}-reader-{i}"), conn, shared.clone())?);
            }
            Some(rtx)
        };
        Ok(Self {
            writer: Some(wtx),
            readers,
            threads,
        })
    }

    /// Queues a job for the writer; `false` when the writer has stopped.
    pub(crate) fn write(&self, job: Job) -> bool {
        self.writer.as_ref().is_some_and(|w| w.send(job).is_ok())
    }

    /// Queues a job for the first free reader (the writer when there are no
    /// readers); `false` when its thread has stopped.
    pub(crate) fn read(&self, job: Job) -> bool {
        match &self.readers {
            Some(r) => r.send(job).is_ok(),
            None => self.write(job),
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

/// Spawns a thread that runs jobs from `queue` on `conn` until the queue closes.
/// A panicking job is contained: its caller sees the answer channel dropped.
fn spawn(
    name: String,
    mut conn: Connection,
    queue: Arc<Mutex<Receiver<Job>>>,
) -> std::io::Result<JoinHandle<()>> {
    let thread_name = name.clone();
    let body = move || {
        loop {
            let job = {
                let rx = queue.lock().unwrap_or_else(|p| p.into_inner());
                rx.recv()
            };
            let Ok(job) = job else { break };
            if std::panic::catch_unwind(AssertUnwindSafe(|| job(&mut conn))).is_err() {
                tracing::error!(thread = %thread_name, "a store job panicked");
            }
        }
    };
    std::thread::Builder::new().name(name).spawn(body)
}

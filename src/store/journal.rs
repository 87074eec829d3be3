//! A write-ahead journal for records the engine stores in batches after it has
//! answered (gateway traces, MCP call records). Each record is appended as one
//! JSON line to a file of this process before it is queued, and its line is
//! dropped once its batch is committed. A process that dies keeps its journal
//! locked until the kernel releases the lock; the next process on the same data
//! directory finds it unlocked and replays it, so an acknowledged record is not
//! lost with the process. Lines are written without `fsync`, the durability the
//! SQLite store has too (`synchronous = NORMAL`): a killed process loses nothing,
//! a power cut may.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// A segment grows to about this size before the next one starts, so a long
/// backlog is reclaimed a segment at a time.
const SEGMENT_BYTES: u64 = 8 * 1024 * 1024;

/// The lock file that says a journal's process is alive.
const LOCK_FILE: &str = "lock";

/// Which segment holds a record, handed back when the record is committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

/// This process's journal directory, locked for the life of the process.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    _lock: File,
}

impl Journal {
    /// Creates and locks `root/<owner>`, the journal of process `owner`. The
    /// directory is made and locked under a hidden name first and then renamed,
    /// so another process looking for orphans never finds it unlocked.
    pub fn open(root: &Path, owner: &str) -> std::io::Result<Arc<Self>> {
        let name = dir_name(owner);
        let dir = root.join(&name);
        let making = root.join(format!(".{name}"));
        std::fs::create_dir_all(&making)?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(making.join(LOCK_FILE))?;
        lock.try_lock().map_err(|e| {
            std::io::Error::other(format!("journal {} is in use: {e}", dir.display()))
        })?;
        std::fs::rename(&making, &dir)?;
        Ok(Arc::new(Self { dir, _lock: lock }))
    }

    /// The log of records of one `kind` (a file-name prefix such as `traces`).
    pub fn log(self: &Arc<Self>, kind: &'static str) -> std::io::Result<JournalLog> {
        let segments = Segments::start(&self.dir, kind)?;
        Ok(JournalLog {
            journal: self.clone(),
            segments: Mutex::new(segments),
        })
    }

    /// Removes this journal's directory when no log holds an uncommitted line
    /// (at a clean shutdown, after the writers flushed).
    pub fn remove_if_empty(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut files = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.file_name().is_some_and(|n| n == LOCK_FILE) {
                continue;
            }
            if entry.metadata().map_or(1, |m| m.len()) > 0 {
                return;
            }
            files.push(path);
        }
        for f in files {
            let _ = std::fs::remove_file(f);
        }
        let _ = std::fs::remove_file(self.dir.join(LOCK_FILE));
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The appending end of one kind of record in this process's journal.
#[derive(Debug)]
pub struct JournalLog {
    journal: Arc<Journal>,
    segments: Mutex<Segments>,
}

impl JournalLog {
    /// Appends `record` as one line; its ticket is given back once committed.
    pub fn append<T: Serialize>(&self, record: &T) -> std::io::Result<Ticket> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        let mut s = self.segments.lock().unwrap_or_else(PoisonError::into_inner);
        s.append(&self.journal.dir, &line)
    }

    /// Says the records of `tickets` are stored: a segment whose lines are all
    /// stored is emptied (the current one) or removed (an older one).
    pub fn committed(&self, tickets: &[Ticket]) {
        let mut s = self.segments.lock().unwrap_or_else(PoisonError::into_inner);
        s.committed(&self.journal.dir, tickets);
    }
}

/// The segments of one kind: the one being written and the uncommitted line
/// count of each.
#[derive(Debug)]
struct Segments {
    kind: &'static str,
    current: u64,
    file: File,
    written: u64,
    pending: BTreeMap<u64, usize>,
}

impl Segments {
    fn start(dir: &Path, kind: &'static str) -> std::io::Result<Self> {
        Ok(Self {
            kind,
            current: 0,
            file: open_segment(dir, kind, 0)?,
            written: 0,
            pending: BTreeMap::new(),
        })
    }

    fn append(&mut self, dir: &Path, line: &[u8]) -> std::io::Result<Ticket> {
        if self.written >= SEGMENT_BYTES {
            let next = self.current + 1;
            self.file = open_segment(dir, self.kind, next)?;
            if !self.pending.contains_key(&self.current) {
                let _ = std::fs::remove_file(segment_path(dir, self.kind, self.current));
            }
            self.current = next;
            self.written = 0;
        }
        self.file.write_all(line)?;
        self.written += line.len() as u64;
        *self.pending.entry(self.current).or_default() += 1;
        Ok(Ticket(self.current))
    }

    fn committed(&mut self, dir: &Path, tickets: &[Ticket]) {
        for Ticket(segment) in tickets {
            if let Some(n) = self.pending.get_mut(segment) {
                *n = n.saturating_sub(1);
            }
        }
        let done: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, n)| **n == 0)
            .map(|(s, _)| *s)
            .collect();
        for segment in done {
            self.pending.remove(&segment);
            if segment == self.current {
                match self.file.set_len(0) {
                    Ok(()) => self.written = 0,
                    Err(e) => tracing::warn!(error = %e, "could not empty a journal segment"),
                }
            } else if let Err(e) = std::fs::remove_file(segment_path(dir, self.kind, segment)) {
                tracing::warn!(error = %e, "could not remove a journal segment");
            }
        }
    }
}

fn dir_name(owner: &str) -> String {
    owner
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn segment_path(dir: &Path, kind: &str, segment: u64) -> PathBuf {
    dir.join(format!("{kind}.{segment:08}.jsonl"))
}

fn open_segment(dir: &Path, kind: &str, segment: u64) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(segment_path(dir, kind, segment))
}

/// The journal of a process that is gone, locked by this one while it replays.
#[derive(Debug)]
pub struct OrphanJournal {
    dir: PathBuf,
    _lock: File,
}

impl OrphanJournal {
    /// Every journal under `root` whose process no longer holds its lock.
    pub fn find(root: &Path) -> std::io::Result<Vec<Self>> {
        let entries = match std::fs::read_dir(root) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut orphans = Vec::new();
        for entry in entries.flatten() {
            let dir = entry.path();
            let hidden = entry.file_name().to_string_lossy().starts_with('.');
            if hidden || !dir.is_dir() {
                continue;
            }
            let lock = match OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(dir.join(LOCK_FILE))
            {
                Ok(f) => f,
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "cannot open a journal's lock");
                    continue;
                }
            };
            if lock.try_lock().is_ok() {
                orphans.push(Self { dir, _lock: lock });
            }
        }
        Ok(orphans)
    }

    /// The journal's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The records of `kind`, oldest segment first. A line that does not parse
    /// (torn by a crash mid-write, so never acknowledged) is skipped with a warning.
    pub fn records<T: DeserializeOwned>(&self, kind: &str) -> std::io::Result<Vec<T>> {
        let mut out = Vec::new();
        for path in self.segment_files(kind)? {
            for (n, line) in BufReader::new(File::open(&path)?).lines().enumerate() {
                let line = line?;
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str(&line) {
                    Ok(r) => out.push(r),
                    Err(e) => tracing::warn!(
                        file = %path.display(), line = n + 1, error = %e,
                        "skipping a journal line that does not parse"
                    ),
                }
            }
        }
        Ok(out)
    }

    /// Removes the segments of `kind` once their records are stored.
    pub fn discard(&self, kind: &str) -> std::io::Result<()> {
        for path in self.segment_files(kind)? {
            std::fs::remove_file(path)?;
        }
        Ok(())
    }

    /// Removes the directory when nothing but its lock is left.
    pub fn close(self) {
        let only_lock = std::fs::read_dir(&self.dir)
            .map(|d| d.flatten().all(|e| e.file_name() == LOCK_FILE))
            .unwrap_or(false);
        if only_lock {
            let _ = std::fs::remove_file(self.dir.join(LOCK_FILE));
            let _ = std::fs::remove_dir(&self.dir);
        }
    }

    fn segment_files(&self, kind: &str) -> std::io::Result<Vec<PathBuf>> {
        let prefix = format!("{kind}.");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.dir)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".jsonl"))
            })
            .collect();
        files.sort();
        Ok(files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Rec {
        n: u32,
    }

    fn lines(path: &Path) -> usize {
        std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
    }

    #[test]
    fn a_segment_is_emptied_once_every_line_in_it_is_committed() {
        let root = tempfile::tempdir().expect("tempdir");
        let journal = Journal::open(root.path(), "host:1:abc").expect("open");
        let log = journal.log("traces").expect("log");
        let a = log.append(&Rec { n: 1 }).expect("append");
        let b = log.append(&Rec { n: 2 }).expect("append");
        let file = segment_path(&journal.dir, "traces", 0);
        assert_eq!(lines(&file), 2);
        log.committed(&[a]);
        assert_eq!(lines(&file), 2, "one line is still uncommitted");
        log.committed(&[b]);
        assert_eq!(lines(&file), 0);
        let c = log.append(&Rec { n: 3 }).expect("append");
        assert_eq!(lines(&file), 1, "appends start again at the beginning");
        log.committed(&[c]);
        journal.remove_if_empty();
        assert!(!journal.dir.exists());
    }

    #[test]
    fn an_older_segment_is_removed_once_committed() {
        let root = tempfile::tempdir().expect("tempdir");
        let journal = Journal::open(root.path(), "p").expect("open");
        let log = journal.log("calls").expect("log");
        let first = log.append(&Rec { n: 0 }).expect("append");
        log.segments.lock().expect("lock").written = SEGMENT_BYTES;
        let second = log.append(&Rec { n: 1 }).expect("append");
        assert_ne!(first, second, "the second line starts a new segment");
        assert!(segment_path(&journal.dir, "calls", 0).exists());
        log.committed(&[first]);
        assert!(!segment_path(&journal.dir, "calls", 0).exists());
        assert_eq!(lines(&segment_path(&journal.dir, "calls", 1)), 1);
    }

    #[test]
    fn only_an_unlocked_journal_is_an_orphan_and_its_records_replay() {
        let root = tempfile::tempdir().expect("tempdir");
        let live = Journal::open(root.path(), "live").expect("open");
        let live_log = live.log("traces").expect("log");
        live_log.append(&Rec { n: 9 }).expect("append");
        let dead_dir = {
            let dead = Journal::open(root.path(), "dead").expect("open");
            let log = dead.log("traces").expect("log");
            log.append(&Rec { n: 1 }).expect("append");
            log.segments.lock().expect("lock").written = SEGMENT_BYTES;
            log.append(&Rec { n: 2 }).expect("append");
            dead.dir.clone()
        };
        // A crash mid-write leaves a torn last line.
        let mut torn = OpenOptions::new()
            .append(true)
            .open(segment_path(&dead_dir, "traces", 1))
            .expect("open");
        torn.write_all(b"{\"n\":").expect("write");
        let orphans = OrphanJournal::find(root.path()).expect("find");
        assert_eq!(orphans.len(), 1, "the live journal stays locked");
        let orphan = orphans.into_iter().next().expect("orphan");
        assert_eq!(orphan.dir(), dead_dir);
        let records: Vec<Rec> = orphan.records("traces").expect("records");
        assert_eq!(records, vec![Rec { n: 1 }, Rec { n: 2 }]);
        assert!(
            OrphanJournal::find(root.path()).expect("find").is_empty(),
            "being replayed"
        );
        orphan.discard("traces").expect("discard");
        orphan.close();
        assert!(!dead_dir.exists());
        assert!(live.dir.exists());
    }
}

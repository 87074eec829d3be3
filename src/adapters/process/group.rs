//! A child's process group as an owned resource: registered with the watchdog
//! while it lives, signalled as a whole, SIGKILLed when the handle is dropped; and
//! the Linux parent-death signal every supervised child gets before `exec`.

use super::watchdog;
use std::sync::atomic::{AtomicBool, Ordering};

/// A process group Hecate started (its id is the leader's pid). Dropping the
/// handle SIGKILLs whatever is left of the group.
#[derive(Debug)]
pub struct ProcessGroup {
    pgid: i32,
    gone: AtomicBool,
}

impl ProcessGroup {
    /// Takes ownership of the group `pgid` (a child that called `setpgid(0, 0)` or
    /// `setsid()`); `None` for ids that do not name a child's group (0, 1, or
    /// beyond `i32`), since `kill(-0)` and `kill(-1)` would reach far more.
    pub fn adopt(pgid: u32) -> Option<ProcessGroup> {
        let pgid = i32::try_from(pgid).ok().filter(|p| *p > 1)?;
        watchdog::register(pgid);
        Some(ProcessGroup {
            pgid,
            gone: AtomicBool::new(false),
        })
    }

    /// The group id (also the leader's pid).
    pub fn id(&self) -> u32 {
        self.pgid.unsigned_abs()
    }

    /// Sends `signal` to every process of the group; whether it reached one.
    pub fn signal(&self, signal: i32) -> bool {
        if self.gone.load(Ordering::Acquire) {
            return false;
        }
        // SAFETY: kill(2) takes plain integers and has no memory-safety
        // preconditions; `-pgid` addresses only the group this handle owns
        // (`adopt` refused 0 and 1).
        unsafe { libc::kill(-self.pgid, signal) == 0 }
    }

    /// Whether any process of the group still exists (an unreaped leader counts).
    pub fn is_alive(&self) -> bool {
        let alive = self.signal(0);
        if !alive {
            self.mark_gone();
        }
        alive
    }

    /// SIGKILLs the whole group now; the handle then considers it gone.
    pub fn kill(&self) {
        self.signal(libc::SIGKILL);
        self.mark_gone();
    }

    /// Records that the group has ended, so it is never signalled again (its id
    /// may be reused) and the watchdog forgets it.
    pub fn mark_gone(&self) {
        if !self.gone.swap(true, Ordering::AcqRel) {
            watchdog::unregister(self.pgid);
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Makes the child receive SIGKILL when the thread that forked it dies (Linux
/// `PR_SET_PDEATHSIG`), and refuses to start it when Hecate already died between
/// `fork` and `prctl`. Only the direct child is covered; the watchdog covers the
/// rest of its group.
#[cfg(target_os = "linux")]
pub(super) fn die_with_parent(cmd: &mut tokio::process::Command) {
    let parent = i32::try_from(std::process::id()).unwrap_or(0);
    let set = move || {
        // SAFETY: prctl(PR_SET_PDEATHSIG) only changes this (forked) process's
        // own attribute and reads no memory.
        let rc = unsafe {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: getppid(2) has no preconditions.
        if unsafe { libc::getppid() } != parent {
            // Hecate died before the signal was armed: do not start orphaned.
            return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
        }
        Ok(())
    };
    // SAFETY: the closure runs in the forked child before `exec`; it allocates
    // nothing and calls only async-signal-safe functions (prctl, getppid).
    unsafe {
        cmd.pre_exec(set);
    }
}

/// Other systems have no parent-death signal; the watchdog still covers them.
#[cfg(not(target_os = "linux"))]
pub(super) fn die_with_parent(_cmd: &mut tokio::process::Command) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::adapters::process::pid_is_running;
    use std::time::{Duration, Instant};

    /// Also why every fork happens on the spawner thread: the signal follows the
    /// forking thread, not the process.
    #[test]
    fn a_child_is_killed_when_the_thread_that_forked_it_ends() {
        let forked = std::thread::spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async {
                let mut cmd = tokio::process::Command::new("sleep");
                cmd.arg("1000").process_group(0);
                die_with_parent(&mut cmd);
                // Not killed on drop: only the parent-death signal may end it.
                let child = cmd.spawn().expect("spawn sleep");
                child.id().expect("pid")
            })
        })
        .join()
        .expect("forking thread");
        let deadline = Instant::now() + Duration::from_secs(10);
        while pid_is_running(forked) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(25));
        }
        let survived = pid_is_running(forked);
        if survived {
            // SAFETY: kill(2) has no memory-safety preconditions; `forked` is the
            // group this test started.
            unsafe {
                libc::kill(-(forked as i32), libc::SIGKILL);
            }
        }
        assert!(
            !survived,
            "sleep {forked} outlived the thread that forked it"
        );
    }

    #[test]
    fn ids_that_would_signal_more_than_one_child_group_are_refused() {
        assert!(ProcessGroup::adopt(0).is_none());
        assert!(ProcessGroup::adopt(1).is_none());
        assert!(ProcessGroup::adopt(u32::MAX).is_none());
    }
}

//! Who owns a live session: this process's owner id (`host:pid:nonce`), and
//! whether another owner is known to be dead.

/// An owner id `host:pid:nonce` for this process.
pub fn new_owner_id() -> String {
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    format!("{}:{}:{}", hostname(), std::process::id(), &nonce[..8])
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string())
}

/// Whether `owner` is known to be dead: it ran on this host and its process no longer
/// exists. Owners on other hosts are never declared dead here (their lease expires).
pub fn owner_is_dead(owner: &str) -> bool {
    let mut parts = owner.rsplitn(3, ':');
    let (_nonce, pid, host) = (parts.next(), parts.next(), parts.next());
    let (Some(pid), Some(host)) = (pid.and_then(|p| p.parse::<u32>().ok()), host) else {
        return false;
    };
    if host != hostname() || !std::path::Path::new("/proc/self").exists() {
        return false;
    }
    pid != std::process::id() && !crate::adapters::process::pid_is_running(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_vanished_pid_is_dead() {
        let me = new_owner_id();
        assert!(!owner_is_dead(&me));
        let ghost = format!("{}:{}:deadbeef", hostname(), u32::MAX - 7);
        assert!(owner_is_dead(&ghost));
        assert!(!owner_is_dead("other-host:1:abc"));
        assert!(!owner_is_dead("garbage"));
    }
}

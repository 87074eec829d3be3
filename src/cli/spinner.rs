//! A progress spinner on stderr for long CLI steps: animated when stderr is a
//! terminal, a single start line otherwise (logs and pipes stay readable).

use std::io::{IsTerminal as _, Write as _};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// A running spinner; [`Spinner::finish`] clears it and prints the last line.
pub struct Spinner {
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Spinner {
    /// Shows `message` with a spinner (or once, when stderr is not a terminal).
    pub fn start(message: String) -> Self {
        let stop = CancellationToken::new();
        if !std::io::stderr().is_terminal() {
            eprintln!("{message} ...");
            return Self { stop, task: None };
        }
        let token = stop.clone();
        let task = tokio::spawn(async move {
            let started = std::time::Instant::now();
            for frame in FRAMES.iter().cycle() {
                let secs = started.elapsed().as_secs();
                eprint!("\r\x1b[2K{frame} {message} ({secs}s)");
                let _ = std::io::stderr().flush();
                tokio::select! {
                    _ = token.cancelled() => break,
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
            }
            eprint!("\r\x1b[2K");
        });
        Self {
            stop,
            task: Some(task),
        }
    }

    /// Stops the animation and prints `line` on stderr.
    pub async fn finish(mut self, line: &str) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        eprintln!("{line}");
    }
}

//! This process's stdin and stdout as async streams for `hecate mcp`. When they
//! are pipes or sockets (as MCP clients spawn servers) they are driven by the
//! reactor directly; otherwise (a terminal, a file) Tokio's thread-backed stdio
//! is used. The reactor path saves a blocking-pool hand-off per read and write,
//! which is most of the hub's per-call overhead on a small machine.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// A readable half of the stdio pair.
pub(crate) type Reader = Box<dyn AsyncRead + Send + Unpin>;
/// A writable half of the stdio pair.
pub(crate) type Writer = Box<dyn AsyncWrite + Send + Unpin>;

enum Kind {
    Pipe,
    Socket,
    Other,
}

fn classify(fd: OwnedFd) -> (Kind, OwnedFd) {
    let file = File::from(fd);
    let kind = match file.metadata().map(|m| m.file_type()) {
        Ok(t) if t.is_fifo() => Kind::Pipe,
        Ok(t) if t.is_socket() => Kind::Socket,
        _ => Kind::Other,
    };
    (kind, OwnedFd::from(file))
}

fn socket(fd: OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
    let s = std::os::unix::net::UnixStream::from(fd);
    s.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(s)
}

/// Stdin, reactor-driven when it is a pipe or a socket.
pub(crate) fn stdin() -> Reader {
    let reactor: std::io::Result<Reader> =
        std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .and_then(|fd| match classify(fd) {
                (Kind::Pipe, fd) => {
                    Ok(Box::new(pipe::Receiver::from_file(File::from(fd))?) as Reader)
                }
                (Kind::Socket, fd) => Ok(Box::new(socket(fd)?) as Reader),
                (Kind::Other, _) => Err(std::io::ErrorKind::Unsupported.into()),
            });
    reactor.unwrap_or_else(|_| Box::new(tokio::io::stdin()))
}

/// Stdout, reactor-driven when it is a pipe or a socket.
pub(crate) fn stdout() -> Writer {
    let reactor: std::io::Result<Writer> =
        std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .and_then(|fd| match classify(fd) {
                (Kind::Pipe, fd) => {
                    Ok(Box::new(pipe::Sender::from_file(File::from(fd))?) as Writer)
                }
                (Kind::Socket, fd) => Ok(Box::new(socket(fd)?) as Writer),
                (Kind::Other, _) => Err(std::io::ErrorKind::Unsupported.into()),
            });
    reactor.unwrap_or_else(|_| Box::new(tokio::io::stdout()))
}

//! A real PostgreSQL server for the tests: one throwaway cluster per test binary
//! (initdb in a temporary directory, `postgres` on a free loopback port with its
//! unix socket in that directory), and a fresh database per test; a test that
//! stops and restarts its server gets a cluster of its own ([`private`]). Run as
//! root, the server runs as the `postgres` user (PostgreSQL refuses root). A
//! watchdog shell holds the server and reads `stop` / `start` lines on its stdin:
//! when the test process exits, however it exits, the stdin closes and the shell
//! stops the server and removes the directory.
//! `scripts/test-deps/postgres.sh` installs the binaries. [`private_tls`] starts a
//! cluster that accepts TCP only over TLS, with a throwaway CA made by the
//! `openssl` command. The recall tests use
//! a second cluster of their own ([`vector_shared`]) from binaries that have
//! pgvector (Debian's PostgreSQL here has no pgvector package).

use std::io::Read as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ChildStdin;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The role the tests connect as.
pub const USER: &str = "hecate";
/// Its password (TCP connections need it; the unix socket trusts).
pub const PASSWORD: &str = "hecate-test-pw";

/// How long the cluster may take to set up and start.
const START_LIMIT: Duration = Duration::from_secs(60);

/// A running cluster.
pub struct PgServer {
    bin: PathBuf,
    socket_dir: PathBuf,
    port: u16,
    control: Mutex<ChildStdin>,
    _watchdog: Child,
}

static SHARED: OnceLock<PgServer> = OnceLock::new();
static VECTOR: OnceLock<PgServer> = OnceLock::new();
static NEXT_DB: AtomicUsize = AtomicUsize::new(0);

/// The cluster of this test binary, started on first use.
pub fn shared() -> &'static PgServer {
    SHARED.get_or_init(PgServer::start)
}

/// The pgvector-capable cluster of this test binary, started on first use.
pub fn vector_shared() -> &'static PgServer {
    VECTOR.get_or_init(|| PgServer::start_from(vector_bin_dir()))
}

/// A new empty database on the pgvector-capable cluster; answers its URL.
pub fn fresh_vector_database_url() -> String {
    let server = vector_shared();
    let name = server.create_database();
    server.url(&name)
}

/// The directory holding a pgvector-capable PostgreSQL's initdb and postgres:
/// `HECATE_TEST_PGVECTOR_BIN`, or `target/test-deps/pgvector/pgserver/pginstall/bin`
/// (the `pgserver` wheel's PostgreSQL 16 with pgvector, unpacked by
/// `scripts/test-deps/postgres.sh`).
fn vector_bin_dir() -> PathBuf {
    let dir = std::env::var_os("HECATE_TEST_PGVECTOR_BIN").map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("target/test-deps/pgvector/pgserver/pginstall/bin")
        },
        PathBuf::from,
    );
    assert!(
        dir.join("initdb").is_file(),
        "no PostgreSQL with pgvector in {}: run scripts/test-deps/postgres.sh \
         (or set HECATE_TEST_PGVECTOR_BIN)",
        dir.display()
    );
    dir
}

/// A cluster of the caller's own (for tests that stop and restart it); it stops
/// when the test process exits.
pub fn private() -> PgServer {
    PgServer::start()
}

/// A cluster of the caller's own that accepts TCP connections only over TLS, with a
/// certificate for `localhost` (not for 127.0.0.1) signed by a throwaway CA.
pub fn private_tls() -> (PgServer, TestCa) {
    let ca = TestCa::make();
    (PgServer::start_with(bin_dir(), Some(&ca)), ca)
}

/// The certificates of a TLS cluster, made with `openssl` in a directory removed
/// on drop.
pub struct TestCa {
    dir: tempfile::TempDir,
}

impl TestCa {
    /// The CA that signed the server's certificate (PEM).
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("ca.crt")
    }

    /// A CA that signed nothing the server has (PEM).
    pub fn other_root(&self) -> PathBuf {
        self.dir.path().join("other.crt")
    }

    fn server_files(&self) -> [PathBuf; 2] {
        ["server.crt", "server.key"].map(|f| self.dir.path().join(f))
    }

    fn make() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("hecate-pg-ca-")
            .tempdir()
            .expect("tempdir");
        std::fs::write(
            dir.path().join("server.ext"),
            "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n\
             keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
        )
        .expect("extensions file");
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        let openssl = |args: &[&str], what: &str| {
            let mut c = Command::new("openssl");
            c.args(args).current_dir(dir.path());
            run_ok(c, &format!("openssl {what} (install the openssl package)"));
        };
        for (name, cn) in [("ca", "Hecate test CA"), ("other", "Another test CA")] {
            let (key, crt, subj) = (
                format!("{name}.key"),
                format!("{name}.crt"),
                format!("/CN={cn}"),
            );
            let mut args = vec!["req", "-x509"];
            args.extend(ec);
            args.extend(["-days", "3", "-subj", &subj, "-keyout", &key, "-out", &crt]);
            args.extend(["-addext", "basicConstraints=critical,CA:TRUE"]);
            args.extend(["-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
            openssl(&args, "CA certificate");
        }
        let mut args = vec!["req"];
        args.extend(ec);
        args.extend([
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ]);
        openssl(&args, "server key");
        openssl(
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "3",
                "-out",
                "server.crt",
                "-extfile",
                "server.ext",
            ],
            "server certificate",
        );
        Self { dir }
    }
}

/// A new empty database on the shared cluster; answers its URL.
pub fn fresh_database_url() -> String {
    let server = shared();
    let name = server.create_database();
    server.url(&name)
}

/// The directory holding initdb, postgres and psql: `HECATE_TEST_PG_BIN`, or the
/// newest `/usr/lib/postgresql/*/bin`.
fn bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("HECATE_TEST_PG_BIN") {
        return PathBuf::from(dir);
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((major, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b).unwrap_or_else(|| {
        panic!(
            "PostgreSQL is not installed: run scripts/test-deps/postgres.sh \
             (or set HECATE_TEST_PG_BIN to the directory holding initdb)"
        )
    })
}

/// A loopback port nobody listens on right now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Whether this process is root (the server must then run as `postgres`).
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// `program` from the PostgreSQL bin dir, run as `postgres` when we are root.
fn as_server_user(bin: &Path, program: &str) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin.join(program));
        c
    } else {
        Command::new(bin.join(program))
    }
}

fn run_ok(mut cmd: Command, what: &str) {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl PgServer {
    /// Sets up and starts a cluster; panics (naming the fix) when it cannot.
    fn start() -> Self {
        Self::start_with(bin_dir(), None)
    }

    /// Sets up and starts a cluster from the binaries in `bin`.
    fn start_from(bin: PathBuf) -> Self {
        Self::start_with(bin, None)
    }

    /// [`PgServer::start_from`], serving TLS (and TCP only over TLS) with `tls`'s
    /// server certificate when given.
    fn start_with(bin: PathBuf, tls: Option<&TestCa>) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("hecate-pg-")
            .tempdir()
            .expect("tempdir")
            .keep();
        if is_root() {
            run_ok(
                {
                    let mut c = Command::new("chown");
                    c.arg("postgres:").arg(&dir);
                    c
                },
                "chown of the cluster directory to postgres (create the user: scripts/test-deps/postgres.sh)",
            );
        }
        let data = dir.join("data");
        let pwfile = dir.join("pw");
        std::fs::write(&pwfile, PASSWORD).expect("password file");
        if is_root() {
            run_ok(
                {
                    let mut c = Command::new("chown");
                    c.arg("postgres:").arg(&pwfile);
                    c
                },
                "chown of the password file",
            );
        }
        run_ok(
            {
                let mut c = as_server_user(&bin, "initdb");
                c.arg("-D")
                    .arg(&data)
                    .args([
                        "-U",
                        USER,
                        "--auth-local=trust",
                        "--auth-host=scram-sha-256",
                    ])
                    .arg(format!("--pwfile={}", pwfile.display()))
                    .args(["--no-sync", "-E", "UTF8", "--locale=C"]);
                c
            },
            "initdb",
        );
        let mut server_options = String::new();
        if let Some(ca) = tls {
            for file in ca.server_files() {
                let to = dir.join(file.file_name().expect("name"));
                std::fs::copy(&file, &to).expect("copy the server certificate");
                let mut chmod = Command::new("chmod");
                chmod.arg("600").arg(&to);
                run_ok(chmod, "chmod of the server key");
                if is_root() {
                    let mut c = Command::new("chown");
                    c.arg("postgres:").arg(&to);
                    run_ok(c, "chown of the server key");
                }
            }
            let hba = data.join("pg_hba.conf");
            let rules = std::fs::read_to_string(&hba).expect("pg_hba.conf");
            let rules: Vec<String> = rules
                .lines()
                .map(|l| match l.strip_prefix("host ") {
                    Some(rest) => format!("hostssl {rest}"),
                    None => l.to_string(),
                })
                .collect();
            std::fs::write(&hba, rules.join("\n") + "\n").expect("pg_hba.conf");
            server_options = format!(
                "-c ssl=on -c ssl_cert_file={0}/server.crt -c ssl_key_file={0}/server.key",
                dir.display()
            );
        }
        let port = free_port();
        // The watchdog: starts the server, stops or starts it again on `stop` /
        // `start` lines, and when its stdin closes (this process exited) stops it
        // and removes the directory.
        let script = r#"
            bin=$1 dir=$2 port=$3 options=$4
            up() {
                "$bin/postgres" -D "$dir/data" -p "$port" -k "$dir" \
                    -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
                    -c full_page_writes=off -c max_connections=300 $options >>"$dir/server.log" 2>&1 &
                pid=$!
            }
            down() {
                kill -INT "$pid" 2>/dev/null
                wait "$pid"
            }
            up
            while read -r command; do
                case "$command" in
                    stop) down ;;
                    start) up ;;
                esac
            done
            down
            rm -rf "$dir"
        "#;
        let mut watchdog = {
            let mut c = if is_root() {
                let mut c = Command::new("runuser");
                c.args(["-u", "postgres", "--", "sh"]);
                c
            } else {
                Command::new("sh")
            };
            c.args(["-c", script, "pg-watchdog"])
                .arg(&bin)
                .arg(&dir)
                .arg(port.to_string())
                .arg(&server_options)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn the PostgreSQL watchdog")
        };
        let control = watchdog.stdin.take().expect("watchdog stdin");
        let server = |watchdog| Self {
            bin: bin.clone(),
            socket_dir: dir.clone(),
            port,
            control: Mutex::new(control),
            _watchdog: watchdog,
        };
        let started = Instant::now();
        loop {
            let ready = Command::new(bin.join("pg_isready"))
                .arg("-h")
                .arg(&dir)
                .args(["-p", &port.to_string(), "-U", USER, "-q"])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return server(watchdog);
            }
            if let Ok(Some(status)) = watchdog.try_wait() {
                let mut log = String::new();
                let _ = std::fs::File::open(dir.join("server.log"))
                    .and_then(|mut f| f.read_to_string(&mut log));
                panic!("PostgreSQL stopped ({status}) before it was ready:\n{log}");
            }
            assert!(
                started.elapsed() < START_LIMIT,
                "PostgreSQL was not ready within {START_LIMIT:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Whether the server accepts connections now.
    fn ready(&self) -> bool {
        Command::new(self.bin.join("pg_isready"))
            .arg("-h")
            .arg(&self.socket_dir)
            .args(["-p", &self.port.to_string(), "-U", USER, "-q"])
            .status()
            .is_ok_and(|s| s.success())
    }

    fn tell(&self, command: &str) {
        let mut control = self.control.lock().unwrap_or_else(|p| p.into_inner());
        writeln!(control, "{command}").expect("tell the watchdog");
    }

    /// Stops the server (fast shutdown: sessions are cut) and waits until it is down.
    pub fn stop(&self) {
        self.tell("stop");
        self.wait_until(false, "stop");
    }

    /// Starts the stopped server again and waits until it accepts connections.
    pub fn start_again(&self) {
        self.tell("start");
        self.wait_until(true, "start");
    }

    fn wait_until(&self, up: bool, what: &str) {
        let started = Instant::now();
        while self.ready() != up {
            assert!(
                started.elapsed() < START_LIMIT,
                "PostgreSQL did not {what} within {START_LIMIT:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The loopback TCP port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name` with the test role's password.
    pub fn url(&self, name: &str) -> String {
        format!(
            "postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{name}",
            self.port
        )
    }

    /// Runs SQL as the test role over the unix socket, in database `db`.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .arg("-h")
            .arg(&self.socket_dir)
            .args(["-p", &self.port.to_string(), "-U", USER, "-d", db])
            .args(["-v", "ON_ERROR_STOP=1", "-X", "-q", "-A", "-t", "-c", sql])
            .stdin(Stdio::null())
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "psql {sql:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Creates a new empty database and answers its name.
    pub fn create_database(&self) -> String {
        let name = format!(
            "hecate_test_{}_{}",
            std::process::id(),
            NEXT_DB.fetch_add(1, Ordering::Relaxed)
        );
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        name
    }
}

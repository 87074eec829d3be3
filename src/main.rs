//! The `hecate` binary: installs the TLS provider, sets up logging, runs the CLI.
//! Started with the hidden watchdog argument, it is the process watchdog instead
//! and does nothing else.

use clap::Parser;

/// mimalloc instead of glibc's malloc: the gateway's request path allocates
/// a great deal, and glibc's allocator was an eighth of its CPU time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    if let Some(code) = hecate::cli::process_watchdog() {
        std::process::exit(code);
    }
    // reqwest (providers and the OTLP exporter) is built without a default TLS
    // backend; ring is the provider and must be installed before any client exists.
    let ring_already_installed = rustls::crypto::ring::default_provider()
        .install_default()
        .is_err();
    let cli = hecate::cli::Cli::parse();
    let telemetry = hecate::cli::telemetry::init(cli.global.verbose, cli.global.log_format);
    if ring_already_installed {
        tracing::debug!("a rustls crypto provider was already installed");
    }
    let mut builder = if cli.serves_one_stdio_client() {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hecate: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(hecate::cli::run(cli));
    drop(runtime);
    drop(telemetry);
    std::process::exit(code);
}

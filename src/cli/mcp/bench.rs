//! `hecate mcp bench`: `tools/call echo` latency (median, p99) and throughput,
//! sequential and with concurrent clients, straight to an upstream over stdio
//! versus through `hecate mcp` on stdio versus through the HTTP endpoint.

/// Arguments of `hecate mcp bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Sequential calls per path.
    #[arg(long, default_value_t = 2000)]
    pub calls: usize,
}

pub async fn run(_args: &BenchArgs) -> anyhow::Result<i32> {
    anyhow::bail!("not built yet")
}

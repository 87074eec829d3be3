//! `hecate mcp login SERVER` and `hecate mcp logout SERVER`: the OAuth sign-in
//! of a configured HTTP upstream. The authorization URL is printed on stdout
//! and, when there is a display and `--no-browser` is not given, opened in the
//! default browser (a browser that cannot be opened is said, never fatal); the
//! sign-in completes when the browser reaches the loopback redirect.

use super::super::AppContext;
use super::super::output::print_text;
use std::time::Duration;

/// Arguments of `hecate mcp login`.
#[derive(Debug, clap::Args)]
pub struct LoginArgs {
    /// The configured server name (`[mcp_servers.NAME]` with a `url`).
    pub server: String,
    /// Scopes to ask for, replacing `[mcp_servers.NAME.oauth] scopes` (the
    /// server's advertised ones when neither is given).
    #[arg(long = "scope")]
    pub scopes: Vec<String>,
    /// How long to wait for the browser, in seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
    /// Only print the URL; do not open a browser.
    #[arg(long)]
    pub no_browser: bool,
}

/// Whether a browser can be shown: on Linux and the other Unix desktops only
/// with `$DISPLAY` or `$WAYLAND_DISPLAY` set (non-empty); always on macOS and
/// Windows.
fn has_display(os: &str, env: impl Fn(&str) -> Option<String>) -> bool {
    match os {
        "macos" | "windows" => true,
        _ => ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|v| env(v).is_some_and(|v| !v.is_empty())),
    }
}

/// Opens `url` in the default browser; answers why not when it could not.
fn open_browser(url: &str) -> Result<(), String> {
    webbrowser::open(url).map_err(|e| e.to_string())
}

/// Runs the sign-in and reports the issuer it completed with.
pub async fn login(ctx: &AppContext, a: &LoginArgs) -> anyhow::Result<i32> {
    let browser = !a.no_browser && has_display(std::env::consts::OS, |v| std::env::var(v).ok());
    let mut shown = Ok(());
    let outcome = ctx
        .engine
        .mcp()
        .login(
            &a.server,
            a.scopes.clone(),
            Duration::from_secs(a.timeout),
            |url| {
                shown = print_text(&format!(
                    "Open this URL in a browser to sign in to {}:\n{url}\n",
                    a.server
                ));
                if browser && shown.is_ok() {
                    shown = match open_browser(url) {
                        Ok(()) => print_text("Opened it in your browser.\n"),
                        Err(why) => print_text(&format!(
                            "Could not open a browser ({why}); open the URL above yourself.\n"
                        )),
                    };
                }
            },
        )
        .await;
    shown?;
    let outcome = outcome?;
    print_text(&format!(
        "Signed in to {} (issuer {}, client {} by {}).\n",
        a.server,
        outcome.issuer,
        outcome.client_id,
        outcome.client.describe()
    ))?;
    ctx.engine.shutdown().await;
    Ok(0)
}

/// Forgets the stored sign-in.
pub async fn logout(ctx: &AppContext, server: &str) -> anyhow::Result<i32> {
    let had = ctx.engine.mcp().logout(server).await?;
    print_text(&if had {
        format!("Signed out of {server}.\n")
    } else {
        format!("No sign-in was stored for {server}.\n")
    })?;
    ctx.engine.shutdown().await;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::has_display;

    #[test]
    fn a_browser_is_opened_only_where_there_is_a_display() {
        let none = |_: &str| None;
        assert!(has_display("macos", none));
        assert!(has_display("windows", none));
        assert!(!has_display("linux", none));
        assert!(!has_display("linux", |_| Some(String::new())));
        assert!(has_display("linux", |v| (v == "DISPLAY").then(|| ":0".into())));
        assert!(has_display("linux", |v| {
            (v == "WAYLAND_DISPLAY").then(|| "wayland-0".into())
        }));
        assert!(has_display("freebsd", |v| (v == "DISPLAY").then(|| ":1".into())));
    }
}

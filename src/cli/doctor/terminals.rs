//! The terminal sandbox line: what `[terminals]` asks for and whether bubblewrap
//! can honour it here (a trial sandbox with the configured binary). When it
//! cannot, agent terminals are refused, never run unconfined.

use super::check::Check;
use crate::config::Config;
use std::collections::HashMap;

/// The line's name.
const NAME: &str = "terminal sandbox";

/// Reports the terminal sandbox setting of `config` under the environment's
/// overrides, and whether it can be honoured.
pub async fn sandbox(config: Option<&Config>, env: &HashMap<String, String>) -> Check {
    let Some(config) = config else {
        return Check::warn(
            NAME,
            "Not checked: the config did not load.",
            "Fix the config line above.",
        );
    };
    let sandbox = match config.terminal_sandbox(env) {
        Ok(s) => s,
        Err(e) => return Check::warn(NAME, e.to_string(), "Fix [terminals] or its variables."),
    };
    if !sandbox.is_on() {
        return Check::ok(
            NAME,
            format!(
                "off ({}): agent terminal commands start in the workspace but can read and \
                 write whatever your user can; set [terminals] sandbox = \"read_only\" or \
                 \"workspace_only\" to confine them",
                sandbox.describe()
            ),
        );
    }
    match sandbox.check().await {
        Ok(bwrap) => Check::ok(
            NAME,
            format!(
                "{}: {} builds the sandbox",
                sandbox.describe(),
                bwrap.display()
            ),
        ),
        Err(e) => Check::warn(
            NAME,
            format!(
                "{}: {}; agent terminals will be refused",
                sandbox.describe(),
                e.cause
            ),
            e.fix(),
        ),
    }
}

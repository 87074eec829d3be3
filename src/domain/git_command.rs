//! Which git command lines may run as `git_exec` calls and `git` tasks: git that
//! would run another program (an alias, a pager, an editor, an ssh command, a
//! hook, a filter or diff driver, a custom transport, `difftool`, `submodule
//! foreach`, `rebase --exec`, ...) is shell, not git, and is refused here with
//! the reason; what passes is a builtin subcommand with options that only make
//! git do git's work. Global `-C` directories are handed back for the caller to
//! confine to the workspace.

/// A git command line that passed the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitCall {
    /// The builtin subcommand (`status`, `commit`, ...); `None` for a bare
    /// `git --version` and the like.
    pub subcommand: Option<String>,
    /// The directories named by global `-C` options, in order; git starts in the
    /// last one resolved against the ones before.
    pub start_dirs: Vec<String>,
}

/// Why a git command line was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("git {what} is refused: {why}")]
pub struct GitRefusal {
    /// The option, key or subcommand at fault.
    pub what: String,
    /// Why it is refused.
    pub why: String,
}

fn refuse(what: impl Into<String>, why: impl Into<String>) -> GitRefusal {
    GitRefusal {
        what: what.into(),
        why: why.into(),
    }
}

const RUNS_PROGRAMS: &str =
    "it makes git run another program, which needs shell_exec (or a shell task) and its approval";

/// Builtin subcommands that only do git's own work (with the option checks
/// below). Anything else, an alias included, is refused.
const SUBCOMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "clean",
    "clone",
    "commit",
    "commit-tree",
    "config",
    "count-objects",
    "describe",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "fetch",
    "for-each-ref",
    "format-patch",
    "fsck",
    "gc",
    "grep",
    "hash-object",
    "help",
    "init",
    "interpret-trailers",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "merge",
    "merge-base",
    "merge-file",
    "merge-tree",
    "mv",
    "name-rev",
    "notes",
    "pull",
    "push",
    "range-diff",
    "read-tree",
    "rebase",
    "reflog",
    "remote",
    "repack",
    "replace",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "shortlog",
    "show",
    "show-branch",
    "show-ref",
    "sparse-checkout",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "switch",
    "symbolic-ref",
    "tag",
    "update-index",
    "update-ref",
    "var",
    "verify-commit",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// Subcommands refused by name, with the reason (the rest of the unknown ones
/// get a generic one).
const REFUSED_SUBCOMMANDS: &[(&str, &str)] = &[
    ("difftool", RUNS_PROGRAMS),
    ("mergetool", RUNS_PROGRAMS),
    ("filter-branch", RUNS_PROGRAMS),
    ("filter-repo", RUNS_PROGRAMS),
    ("send-email", RUNS_PROGRAMS),
    ("instaweb", RUNS_PROGRAMS),
    ("web--browse", RUNS_PROGRAMS),
    ("credential", RUNS_PROGRAMS),
    ("credential-store", RUNS_PROGRAMS),
    ("credential-cache", RUNS_PROGRAMS),
    ("hook", RUNS_PROGRAMS),
    ("daemon", "it starts a server"),
    ("http-backend", "it is a server program"),
    ("upload-pack", "it is a server program"),
    ("receive-pack", "it is a server program"),
    ("upload-archive", "it is a server program"),
    ("shell", "it is a login shell"),
    ("maintenance", "it registers scheduled jobs with the system"),
];

/// Global options git takes before the subcommand that change nothing but git's
/// own output or pathspec rules.
const SAFE_GLOBAL_FLAGS: &[&str] = &[
    "-p",
    "--paginate",
    "-P",
    "--no-pager",
    "--no-replace-objects",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
    "--no-advice",
    "--version",
    "-v",
    "--help",
    "-h",
    "--html-path",
    "--man-path",
    "--info-path",
];

/// The merge strategies git ships; another name makes git run `git-merge-NAME`
/// from the search path.
const STRATEGIES: &[&str] = &["ort", "recursive", "resolve", "octopus", "ours", "subtree"];

/// Whether the configuration key `key` (`section[.subsection].name`) makes git
/// run a program, redirect where it reads configuration or hooks from, or loosen
/// its safety checks. Section and name compare without case, as git does.
pub fn is_dangerous_config_key(key: &str) -> bool {
    let lower = key.trim().to_ascii_lowercase();
    let (section, rest) = lower.split_once('.').unwrap_or((lower.as_str(), ""));
    let name = rest.rsplit('.').next().unwrap_or(rest);
    let whole_sections = [
        "alias",
        "filter",
        "credential",
        "include",
        "includeif",
        "protocol",
        "pager",
        "difftool",
        "mergetool",
        "sendemail",
        "instaweb",
        "browser",
        "web",
        "man",
        "gpg",
        "ssh",
        "uploadpack",
        "trailer",
        "interactive",
        "tar",
        "hook",
        "safe",
        "extensions",
        "sequence",
    ];
    if whole_sections.contains(&section) {
        return true;
    }
    if ["textconv", "command", "driver", "cmd", "program"].contains(&name) {
        return true;
    }
    match section {
        "core" => matches!(
            name,
            "pager"
                | "editor"
                | "sshcommand"
                | "hookspath"
                | "fsmonitor"
                | "gitproxy"
                | "askpass"
                | "alternaterefscommand"
                | "worktree"
                | "attributesfile"
        ),
        "diff" => name == "external" || name == "tool",
        "merge" => name == "tool",
        "remote" => matches!(name, "uploadpack" | "receivepack" | "vcs" | "proxy"),
        "submodule" => name == "update",
        "help" => name == "browser",
        _ => false,
    }
}

/// The key of a `key=value` (or bare `key`) configuration argument.
fn key_of(assignment: &str) -> &str {
    assignment.split_once('=').map_or(assignment, |(k, _)| k)
}

fn check_config_assignment(option: &str, assignment: &str) -> Result<(), GitRefusal> {
    let key = key_of(assignment);
    if is_dangerous_config_key(key) {
        return Err(refuse(format!("{option} {key}"), RUNS_PROGRAMS));
    }
    Ok(())
}

/// Whether `arg` is the long option `long` (or an unambiguous-looking prefix of
/// it, as git's option parser accepts), with or without `=value`.
fn is_long(arg: &str, long: &str) -> bool {
    let Some(name) = arg.strip_prefix("--") else {
        return false;
    };
    let name = name.split_once('=').map_or(name, |(n, _)| n);
    let long = long.trim_start_matches('-');
    name.len() >= 3 && long.starts_with(name)
}

/// Whether `arg` is the short option `short` (`-x`, `-xVALUE`, or bundled in a
/// run of short flags such as `-ix`).
fn is_short(arg: &str, short: char) -> bool {
    arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(short)
}

/// The value of a long option given as `--opt=value` or `--opt value`.
fn long_value<'a>(args: &'a [String], i: usize, long: &str) -> Option<&'a str> {
    let arg = &args[i];
    if !is_long(arg, long) {
        return None;
    }
    match arg.split_once('=') {
        Some((_, v)) => Some(v),
        None => args.get(i + 1).map(String::as_str),
    }
}

/// Checks a git command line (the arguments after `git`) and answers the call,
/// or why it is refused.
pub fn check(args: &[String]) -> Result<GitCall, GitRefusal> {
    let mut start_dirs = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if !arg.starts_with('-') {
            break;
        }
        let value = |i: usize| {
            args.get(i + 1)
                .cloned()
                .ok_or_else(|| refuse(arg, "it needs a value"))
        };
        if arg == "-C" {
            let dir = value(i)?;
            if dir.starts_with('/') || dir.split('/').any(|part| part == "..") {
                return Err(refuse(
                    format!("-C {dir}"),
                    "git runs inside the workspace only; name a directory relative to it",
                ));
            }
            start_dirs.push(dir);
            i += 2;
            continue;
        }
        if arg == "-c" {
            check_config_assignment("-c", &value(i)?)?;
            i += 2;
            continue;
        }
        if let Some(assignment) = arg.strip_prefix("-c") {
            check_config_assignment("-c", assignment)?;
            i += 1;
            continue;
        }
        if arg == "--exec-path" || SAFE_GLOBAL_FLAGS.contains(&arg) {
            i += 1;
            continue;
        }
        if arg.starts_with("--list-cmds=") || arg.starts_with("--namespace=") {
            i += 1;
            continue;
        }
        if arg.starts_with("--exec-path=") {
            return Err(refuse("--exec-path", RUNS_PROGRAMS));
        }
        if arg.starts_with("--config-env") {
            return Err(refuse(
                "--config-env",
                "it sets configuration from Hecate's environment; use -c with a safe key",
            ));
        }
        if [
            "--git-dir",
            "--work-tree",
            "--bare",
            "--attr-source",
            "--super-prefix",
        ]
        .iter()
        .any(|o| arg == *o || arg.starts_with(&format!("{o}=")))
        {
            return Err(refuse(
                arg.split('=').next().unwrap_or(arg),
                "Hecate runs git on the workspace's own repository only",
            ));
        }
        return Err(refuse(
            arg,
            "it is not a global option Hecate knows to be safe",
        ));
    }
    let Some(sub) = args.get(i) else {
        return Ok(GitCall {
            subcommand: None,
            start_dirs,
        });
    };
    if let Some((_, why)) = REFUSED_SUBCOMMANDS.iter().find(|(n, _)| n == sub) {
        return Err(refuse(sub.as_str(), *why));
    }
    if !SUBCOMMANDS.contains(&sub.as_str()) {
        return Err(refuse(
            sub.as_str(),
            "it is not a builtin subcommand Hecate runs (aliases and external git-* programs run other programs)",
        ));
    }
    check_subcommand(sub, &args[i + 1..])?;
    Ok(GitCall {
        subcommand: Some(sub.clone()),
        start_dirs,
    })
}

/// The per-subcommand options that run programs.
fn check_subcommand(sub: &str, rest: &[String]) -> Result<(), GitRefusal> {
    let first_word = rest
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str);
    let named = |what: &str| refuse(format!("{sub} {what}"), RUNS_PROGRAMS);
    match (sub, first_word) {
        ("submodule", Some("foreach")) => return Err(named("foreach")),
        ("bisect", Some("run")) => return Err(named("run")),
        _ => {}
    }
    for (i, arg) in rest.iter().enumerate() {
        if arg == "--" {
            break;
        }
        let transport = matches!(
            sub,
            "clone" | "fetch" | "pull" | "push" | "ls-remote" | "archive" | "submodule"
        );
        if transport
            && ["--upload-pack", "--receive-pack", "--exec", "--remote"]
                .iter()
                .any(|o| is_long(arg, o) && !(*o == "--remote" && sub != "archive"))
        {
            return Err(named(arg.split('=').next().unwrap_or(arg)));
        }
        if sub == "clone" && is_short(arg, 'u') {
            return Err(named("-u"));
        }
        if matches!(sub, "clone" | "init")
            && (is_long(arg, "--template") || is_long(arg, "--separate-git-dir"))
        {
            return Err(refuse(
                format!("{sub} {}", arg.split('=').next().unwrap_or(arg)),
                "it installs hooks or a git directory from elsewhere",
            ));
        }
        if sub == "clone" {
            if let Some(v) = long_value(rest, i, "--config") {
                check_config_assignment("clone --config", v)?;
            }
            if arg == "-c" {
                check_config_assignment("clone -c", rest.get(i + 1).map_or("", String::as_str))?;
            }
        }
        if sub == "rebase" && (is_long(arg, "--exec") || is_short(arg, 'x')) {
            return Err(named("--exec"));
        }
        if sub == "grep" && (is_long(arg, "--open-files-in-pager") || is_short(arg, 'O')) {
            return Err(named("--open-files-in-pager"));
        }
        if sub == "help"
            && (["--web", "--info", "--man"].iter().any(|o| is_long(arg, o))
                || ['w', 'i', 'm'].iter().any(|c| is_short(arg, *c)))
        {
            return Err(named(arg));
        }
        if matches!(sub, "merge" | "pull" | "rebase" | "cherry-pick" | "revert") {
            // `-s` is the strategy for merge, pull and rebase (cherry-pick and
            // revert read it as --signoff).
            let short = matches!(sub, "merge" | "pull" | "rebase");
            let strategy = if short && arg == "-s" {
                rest.get(i + 1).map(String::as_str)
            } else if let Some(v) = arg.strip_prefix("-s").filter(|v| short && !v.is_empty()) {
                Some(v)
            } else {
                long_value(rest, i, "--strategy")
            };
            if let Some(s) = strategy
                && !STRATEGIES.contains(&s)
            {
                return Err(named(&format!("--strategy {s}")));
            }
        }
        if sub == "config" && !arg.starts_with('-') && is_dangerous_config_key(key_of(arg)) {
            return Err(refuse(format!("config {}", key_of(arg)), RUNS_PROGRAMS));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;

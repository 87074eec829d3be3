use super::*;

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

#[test]
fn everyday_git_passes() {
    for line in [
        "status",
        "status --short",
        "-c user.name=Agent -c user.email=a@b commit -m msg",
        "commit -am msg",
        "add -A",
        "diff HEAD~1 -- src",
        "log --oneline -n 5",
        "--no-pager log -p",
        "checkout -b feature",
        "merge -s ort main",
        "merge --strategy=recursive main",
        "merge -X theirs main",
        "rebase main",
        "rebase -i main",
        "config user.name Agent",
        "config --get remote.origin.url",
        "remote add origin https://example.invalid/repo.git",
        "fetch origin",
        "clone --depth 1 https://example.invalid/r.git sub",
        "clone -c core.autocrlf=false https://example.invalid/r.git",
        "grep -n needle",
        "stash push -m wip",
        "submodule update --init",
        "bisect start",
        "archive --format=tar HEAD",
        "--version",
        "help commit",
        "-C sub status",
    ] {
        check(&words(line)).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
}

#[test]
fn git_that_runs_programs_is_refused() {
    let hostile = [
        "-c alias.x=!touch${IFS}/tmp/pwned x",
        "-c alias.st=status st",
        "-calias.x=!sh x",
        "-c core.pager=sh log",
        "-c core.Pager=sh log",
        "-c core.editor=sh commit",
        "-c core.sshCommand=sh fetch origin",
        "-c core.hooksPath=/tmp/hooks commit -m x",
        "-c core.fsmonitor=/tmp/x status",
        "-c diff.external=/tmp/x diff",
        "-c diff.foo.textconv=/tmp/x diff",
        "-c filter.lfs.clean=/tmp/x add .",
        "-c credential.helper=!sh fetch",
        "-c include.path=/tmp/cfg status",
        "-c protocol.ext.allow=always clone ext::sh",
        "-c sequence.editor=sh rebase -i main",
        "-c gpg.program=/tmp/x commit -S -m x",
        "-c uploadpack.packObjectsHook=/tmp/x fetch",
        "-c remote.origin.uploadpack=/tmp/x fetch",
        "-c merge.x.driver=/tmp/x merge main",
        "-c safe.bareRepository=all status",
        "--config-env=core.pager=EVIL log",
        "--exec-path=/tmp log",
        "--git-dir=/tmp/other status",
        "--work-tree=/ status",
        "--bare status",
        "x",
        "st",
        "difftool -x sh HEAD",
        "difftool --tool=vimdiff",
        "mergetool",
        "submodule foreach touch /tmp/x",
        "submodule --quiet foreach touch /tmp/x",
        "filter-branch --tree-filter x",
        "bisect run sh -c x",
        "rebase --exec=sh main",
        "rebase --exec sh main",
        "rebase -x sh main",
        "rebase -ix sh main",
        "fetch --upload-pack=sh origin",
        "fetch --upload-pa=sh origin",
        "pull --upload-pack sh origin",
        "push --receive-pack=sh origin",
        "push --exec=sh origin",
        "ls-remote --upload-pack=sh origin",
        "clone -u sh https://example.invalid/r.git",
        "clone --upload-pack=sh https://example.invalid/r.git",
        "clone --template=/tmp/t https://example.invalid/r.git",
        "clone -c core.fsmonitor=x https://example.invalid/r.git",
        "clone --config=alias.x=!sh https://example.invalid/r.git",
        "init --template=/tmp/t",
        "archive --remote=x --exec=sh HEAD",
        "grep -O sh needle",
        "grep --open-files-in-pager=sh needle",
        "help -w commit",
        "merge -s evil main",
        "merge --strategy=evil main",
        "config alias.x !sh",
        "config core.hooksPath /tmp",
        "config --local core.fsmonitor /tmp/x",
        "config filter.x.clean sh",
        "config --add include.path /tmp/c",
        "send-email x",
        "instaweb",
        "credential fill",
        "hook run pre-commit",
        "maintenance start",
        "-c",
        "--unknown-global status",
        "-C /etc status",
        "-C sub/../.. status",
    ];
    for line in hostile {
        let e = check(&words(line)).expect_err(line);
        assert!(!e.why.is_empty(), "{line}");
    }
}

#[test]
fn start_directories_are_handed_back_and_a_bare_call_passes() {
    let c = check(&words("-C a -C b status")).expect("passes");
    assert_eq!(c.start_dirs, ["a", "b"]);
    assert_eq!(c.subcommand.as_deref(), Some("status"));
    assert_eq!(check(&[]).expect("bare").subcommand, None);
}

#[test]
fn dangerous_keys_compare_without_case_and_by_their_last_name() {
    assert!(is_dangerous_config_key("CORE.HOOKSPATH"));
    assert!(is_dangerous_config_key("diff.pdf.textconv"));
    assert!(is_dangerous_config_key("Alias.Anything"));
    assert!(!is_dangerous_config_key("user.email"));
    assert!(!is_dangerous_config_key("core.autocrlf"));
    assert!(!is_dangerous_config_key("color.ui"));
}

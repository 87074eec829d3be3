use super::*;

fn shell(cmd: &str) -> TaskSpec {
    TaskSpec {
        execution_kind: Some(ExecutionKind::Shell),
        shell_command: cmd.into(),
        ..Default::default()
    }
}

#[test]
fn validation_names_the_field() {
    let e = TaskSpec::default().validate().expect_err("no kind");
    assert_eq!(e.details["field"], "execution_kind");
    let e = shell(" ").validate().expect_err("no command");
    assert_eq!(e.details["field"], "shell_command");
    let mut s = shell("true");
    s.workspace_mode = WorkspaceMode::InPlace;
    assert_eq!(
        s.validate().expect_err("no dir").details["field"],
        "working_directory"
    );
    s.working_directory = "relative".into();
    assert_eq!(
        s.validate().expect_err("relative").details["field"],
        "working_directory"
    );
    let git = TaskSpec {
        execution_kind: Some(ExecutionKind::Git),
        git_command: "log 'unclosed".into(),
        ..Default::default()
    };
    assert_eq!(
        git.validate().expect_err("quote").details["field"],
        "git_command"
    );
    assert_eq!(
        shell("true").validate().expect("valid"),
        ExecutionKind::Shell
    );
    let mut s = shell("true");
    s.additional_directories = vec!["/abs".into(), "rel".into()];
    assert_eq!(
        s.validate().expect_err("relative").details["field"],
        "additional_directories"
    );
}

#[test]
fn policies_gate_by_kind_and_refuse_unknown_names() {
    let p = ApprovalPolicy::default();
    assert_eq!(
        p.gate_for(ExecutionKind::Shell, &shell("x")),
        Some(TaskApprovalKind::ShellCommand)
    );
    let none = ApprovalPolicy::parse("").expect("empty");
    assert_eq!(none.gate_for(ExecutionKind::Shell, &shell("x")), None);
    let all = ApprovalPolicy::parse("all_tools").expect("all");
    let mut net = shell("x");
    net.sandbox_network = true;
    assert_eq!(
        all.gate_for(ExecutionKind::Shell, &net),
        Some(TaskApprovalKind::NetworkEgress)
    );
    assert!(p.gates_tool("shell_exec") && p.gates_tool("file_edit"));
    assert!(!p.gates_tool("read_file") && !p.gates_tool("list_dir"));
    let reads = ApprovalPolicy::parse("read_file").expect("reads");
    assert!(reads.gates_tool("read_file") && !reads.gates_tool("shell_exec"));
    assert!(all.gates_tool("list_dir") && !none.gates_tool("shell_exec"));
    let e = ApprovalPolicy::parse("shell_exec,bogus").expect_err("unknown");
    assert!(e.message.contains("bogus"), "{}", e.message);
}

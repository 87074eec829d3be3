//! The operator console over plain HTTP (the browser tests in `tests/interop`
//! drive it in Chromium): `/` and every file the page names are served with the
//! strict Content Security Policy and validators, without a token but with the
//! Host and Origin checks; nothing outside `console/` is reachable; unknown
//! API-shaped paths stay JSON 404s. And the approvals inbox the console's
//! Approvals page reads: every pending approval of the namespace, once.

use crate::support::common::{Home, git_workspace, permission_turn};
use crate::support::http::{Api, create_agent_session, pending_approval, serve};
use serde_json::json;

/// The `src` and `href` values of the page that point into `/console/`.
fn console_links(html: &str) -> Vec<String> {
    html.split(['"', '\''])
        .filter(|s| s.starts_with("/console/"))
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn the_page_and_its_files_are_served_with_a_strict_policy_and_no_token() {
    let mut home = Home::empty();
    home.set("HECATE_TOKEN", "console-token");
    let s = serve(&home);
    let api = Api::new(&s);
    let http = &api.http;

    let page = http.get(api.url("/")).send().await.expect("GET /");
    assert_eq!(page.status(), 200);
    let h = page.headers().clone();
    assert_eq!(h["content-type"], "text/html; charset=utf-8");
    let csp = h["content-security-policy"].to_str().expect("header text");
    for part in [
        "default-src 'none'",
        "script-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(part), "{csp}");
    }
    assert!(
        !csp.contains("unsafe-inline") && !csp.contains("http"),
        "{csp}"
    );
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["x-frame-options"], "DENY");
    let etag = h["etag"].to_str().expect("header text").to_string();
    let html = page.text().await.expect("page");
    let links = console_links(&html);
    assert!(
        links.iter().any(|l| l.ends_with(".js")) && links.iter().any(|l| l.ends_with(".css")),
        "the page names its script and style: {links:?}"
    );
    assert!(!html.contains("<script>"), "no inline script");
    for link in &links {
        let r = http.get(api.url(link)).send().await.expect("request");
        assert_eq!(r.status(), 200, "{link}");
        let kind = r.headers()["content-type"]
            .to_str()
            .expect("header text")
            .to_string();
        let want = if link.ends_with(".js") {
            "text/javascript"
        } else {
            "text/css"
        };
        assert!(kind.starts_with(want), "{link}: {kind}");
        assert!(r.headers().contains_key("content-security-policy"));
    }

    let again = http
        .get(api.url("/"))
        .header("if-none-match", &etag)
        .send()
        .await
        .expect("request");
    assert_eq!(again.status(), 304);

    // The page loads without the token; the API it calls still needs it.
    assert_eq!(api.get("/hecate/v1/system/stats").await.status, 401);
    let with = Api::new(&s).with_token("console-token");
    assert_eq!(with.get("/hecate/v1/system/stats").await.status, 200);
}

/// Resolves `spec` (a relative import) against the URL path of the module
/// that names it.
fn resolve_import(from: &str, spec: &str) -> String {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for piece in spec.split('/') {
        match piece {
            "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// The relative modules a console file imports statically (`import … from '…'`).
fn static_imports(path: &str, source: &str) -> Vec<String> {
    source
        .lines()
        .filter(|l| l.starts_with("import ") || l.starts_with("} from "))
        .filter_map(|l| {
            let spec = l.rsplit(" from ").next()?.trim().trim_end_matches(';');
            let spec = spec.trim_matches(['\'', '"']);
            spec.starts_with('.').then(|| resolve_import(path, spec))
        })
        .collect()
}

/// `VIEWS` in the served `app.js`: each view's module and the dependency list it
/// preloads, as URL paths.
fn view_preloads(app: &str) -> Vec<(String, std::collections::BTreeSet<String>)> {
    let table = app
        .split("const VIEWS = {")
        .nth(1)
        .and_then(|rest| rest.split("\n};").next())
        .expect("app.js has its VIEWS table");
    table
        .split("module: '")
        .skip(1)
        .map(|entry| {
            let module = entry.split('\'').next().expect("module name");
            let deps = entry
                .split("deps: [")
                .nth(1)
                .and_then(|d| d.split(']').next())
                .expect("a deps list");
            let deps = deps
                .split('\'')
                .skip(1)
                .step_by(2)
                .map(|d| resolve_import("/console/src/x.js", d))
                .collect();
            (resolve_import("/console/src/x.js", module), deps)
        })
        .collect()
}

/// The page loads each view's code when it is first opened, with that view's
/// imports preloaded beside it: every list in `app.js` must be exactly what the
/// view imports, directly or not, beyond what the shell (`app.js`) imports, or a
/// page would fetch its imports one level at a time (a missing entry) or fetch
/// code it does not run (an extra one).
#[tokio::test]
async fn each_views_preload_list_is_exactly_what_it_imports() {
    let home = Home::empty();
    let s = serve(&home);
    let api = Api::new(&s);
    let fetch = |path: String| {
        let http = api.http.clone();
        let url = api.url(&path);
        async move {
            let r = http.get(url).send().await.expect("request");
            assert_eq!(r.status(), 200, "{path}");
            r.text().await.expect("module text")
        }
    };
    let mut sources = std::collections::HashMap::new();
    let mut closure = async |module: &str| {
        let mut seen = std::collections::BTreeSet::new();
        let mut todo = vec![module.to_string()];
        while let Some(path) = todo.pop() {
            if !sources.contains_key(&path) {
                let text = fetch(path.clone()).await;
                sources.insert(path.clone(), text);
            }
            for dep in static_imports(&path, &sources[&path]) {
                if seen.insert(dep.clone()) {
                    todo.push(dep);
                }
            }
        }
        seen
    };
    let shell = closure("/console/app.js").await;
    assert!(shell.contains("/console/src/router.js"), "{shell:?}");
    let views = view_preloads(&fetch("/console/app.js".into()).await);
    assert!(views.len() >= 12, "every page has its entry: {views:?}");
    for (module, listed) in views {
        let needed: std::collections::BTreeSet<String> =
            closure(&module).await.difference(&shell).cloned().collect();
        assert_eq!(
            listed, needed,
            "{module}: the preload list against its imports"
        );
    }
}

#[tokio::test]
async fn nothing_outside_the_console_is_reachable_and_api_paths_stay_json() {
    let home = Home::empty();
    let s = serve(&home);
    let api = Api::new(&s);
    for path in [
        "/console/%2e%2e/Cargo.toml",
        "/console/..%2fCargo.toml",
        "/console/no-such-file.js",
        "/console/",
        "/hecate/v1/no-such-thing",
        "/v2/models",
        "/index.html.bak",
    ] {
        let a = api.get(path).await;
        assert_eq!(a.status, 404, "{path}: {}", a.body);
        assert_eq!(a.error_type(), "not_found", "{path}");
    }

    // DNS rebinding: a foreign Host or Origin gets neither the page nor its files.
    for (name, value) in [
        ("host", "evil.example:8765"),
        ("origin", "http://evil.example"),
    ] {
        let r = api
            .http
            .get(api.url("/"))
            .header(name, value)
            .send()
            .await
            .expect("request");
        assert_eq!(r.status(), 403, "{name}: {value}");
    }
}

#[tokio::test]
async fn the_inbox_lists_each_pending_approval_of_the_namespace_once() {
    let home = Home::empty();
    let write = json!([{"fs_write": {"path": "b.txt", "content": "new\n"}}]);
    home.add_scripted_agent(
        &json!({"turns": [permission_turn("Write b.txt", write)]}).to_string(),
        &[],
        "",
    );
    let ws = git_workspace();
    let s = serve(&home);
    let api = Api::new(&s);

    let empty = api.get("/hecate/v1/approvals").await;
    assert_eq!(empty.status, 200, "{}", empty.body);
    assert_eq!(empty.body, json!({"object": "approvals", "data": []}));

    // A session's question.
    let session = create_agent_session(&api, "fixture", ws.path()).await;
    let turn = {
        let (api, session) = (api.clone(), session.clone());
        tokio::spawn(async move { api.say(&session, "please write").await })
    };
    let asked = pending_approval(&api, &session).await;

    // A task's gate (shell tasks ask by default).
    let task = api
        .post(
            "/hecate/v1/tasks",
            json!({"execution_kind": "shell", "shell_command": "true"}),
        )
        .await;
    assert_eq!(task.status, 201, "{}", task.body);
    let task_id = task.body["data"]["id"].as_str().expect("id").to_string();
    let run = api
        .post(&format!("/hecate/v1/tasks/{task_id}/start"), json!({}))
        .await;
    assert_eq!(run.status, 202, "{}", run.body);

    let inbox = api.get("/hecate/v1/approvals").await;
    let items = inbox.body["data"].as_array().expect("data").clone();
    assert_eq!(items.len(), 2, "{}", inbox.body);
    let from_session = items
        .iter()
        .find(|i| i["kind"] == "session")
        .expect("session item");
    assert_eq!(from_session["approval_id"], asked["id"]);
    assert_eq!(from_session["session_id"], session.as_str());
    assert_eq!(from_session["tool_name"], "Write b.txt");
    assert!(from_session["session_title"].is_string());
    assert_eq!(
        from_session["scope_choices"],
        json!(["once", "session", "workspace_tool", "adapter_tool"])
    );
    let gate = items
        .iter()
        .find(|i| i["kind"] == "task")
        .expect("task item");
    assert_eq!(gate["task_id"], task_id.as_str());
    assert_eq!(gate["tool_kind"], "shell_command");
    assert_eq!(gate["scope_choices"], json!([]));
    let stats = api.get("/hecate/v1/system/stats").await;
    assert!(stats.body["data"]["pending_approvals"].as_u64() >= Some(1));
    assert_eq!(
        stats.body["data"]["pending_approvals"], 2,
        "the pending count is the inbox's length: {}",
        stats.body
    );

    // Answering both empties the inbox.
    let approval_id = asked["id"].as_str().expect("id");
    let ok = api
        .post(
            &format!("/hecate/v1/agent-chat/sessions/{session}/approvals/{approval_id}/resolve"),
            json!({"decision": "approve", "scope": "once"}),
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    let gate_id = gate["approval_id"].as_str().expect("id");
    let ok = api
        .post(
            &format!("/hecate/v1/tasks/{task_id}/approvals/{gate_id}/resolve"),
            json!({"decision": "reject"}),
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert_eq!(turn.await.expect("turn").status, 200);
    assert!(ws.path().join("b.txt").exists());
    let after = api.get("/hecate/v1/approvals").await;
    assert_eq!(after.body["data"], json!([]), "{}", after.body);
}

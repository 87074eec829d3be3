//! acpx (a real ACP client, on the TypeScript SDK) against `hecate acp` in
//! front of the fixture agent: the thread's title set from the first prompt
//! and then the agent's own title both reach it as `session_info_update`s.

use crate::support::acp_clients::{ClientRun, Clients, acpx, acpx_answer};
use crate::support::common::{Home, workspace};
use serde_json::json;

#[test]
fn acpx_hears_the_title_hecate_gives_and_the_one_the_agent_gives() {
    let home = Home::empty();
    let script = json!({"turns": [{"match": "rename", "actions": [
        {"title": "Named by the agent"}, {"text": "renamed"}]}]});
    home.add_scripted_agent(&script.to_string(), &[], "");
    let (_g, ws) = workspace();
    let out = acpx(
        &Clients::get(),
        &home,
        &ws,
        "--target agent:fixture",
        "--approve-all",
        "please rename this thread",
        &[],
    );
    let ClientRun { stdout, frames, .. } = ClientRun::exited(&out, 0, "");
    let titles: Vec<String> = frames
        .iter()
        .filter(|f| f["params"]["update"]["sessionUpdate"] == "session_info_update")
        .filter_map(|f| f["params"]["update"]["title"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        titles,
        ["please rename this thread", "Named by the agent"],
        "{stdout}"
    );
    assert_eq!(acpx_answer(&frames), "renamed", "{stdout}");
}

//! Several threads in one `hecate acp`: a thread's updates reach the editor whole
//! while another thread of the same process floods the engine with events.

use crate::support::acp_editor::*;
use crate::support::common::{Home, ModelServer, workspace};
use agent_client_protocol::v1::schema::{SessionNotification, StopReason};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn acp_prompt_updates_survive_a_busy_neighbour() {
    let mine: Vec<String> = (0..3000).map(|i| format!("c{i} ")).collect();
    let flood = (0..30_000)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let server = ModelServer::start(Some(json!([
        {"match": {"contains": "flood"}, "text": flood},
        {"match": {"contains": "mine"}, "chunks": mine}
    ])));
    let mut home = Home::with_openai(&server);
    home.set("PROVIDER_FIX_MODELS", "fixture-model");
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let busy = new_session(&cx, &ws).await?.session_id;
        let quiet = new_session(&cx, &ws).await?.session_id;
        // The flood starts first (the fixture serves its script in order), then
        // the quiet thread prompts while it runs.
        let flooding = {
            let cx = cx.clone();
            let busy = busy.clone();
            tokio::spawn(async move { prompt(&cx, &busy, "flood").await })
        };
        while !server
            .requests()
            .iter()
            .any(|r| r.to_string().contains("flood"))
        {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert_eq!(prompt(&cx, &quiet, "mine").await?, StopReason::EndTurn);
        assert_eq!(flooding.await.expect("flood task")?, StopReason::EndTurn);
        let got: Vec<SessionNotification> = std::iter::from_fn(|| updates.0.try_recv().ok())
            .filter(|n| n.session_id == quiet)
            .collect();
        let chunks: Vec<String> = got.iter().filter_map(|n| agent_text(&n.update)).collect();
        // Chunks that wait together in the turn's queue arrive merged; none is
        // lost or reordered.
        assert!(!chunks.is_empty() && chunks.len() <= mine.len());
        assert_eq!(
            chunks.concat(),
            mine.concat(),
            "every chunk of the quiet thread, in order"
        );
        Ok(())
    })
    .await
    .expect("editor");
}

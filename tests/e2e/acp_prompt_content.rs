//! Prompt content beyond text through `hecate acp`: what `initialize`
//! advertises; images, audio, embedded resources and resource links reaching
//! an external agent as its own `promptCapabilities` allow (checked through
//! what the fixture agent recorded, which refuses anything it did not
//! advertise) and a model as its capabilities allow (checked through the
//! fixture model server's recorded request); and the clear error, -32602 with
//! `data.reason` `content_unsupported` naming the block and the target, for a
//! block the thread's target cannot take.

use crate::support::acp_editor::*;
use crate::support::common::{Home, ModelServer, workspace};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource, EmbeddedResourceResource,
    ImageContent, PromptRequest, ResourceLink, SessionId, StopReason, TextResourceContents,
};
use agent_client_protocol::{Agent, Error, ErrorCode};
use serde_json::{Value, json};
use std::path::Path;

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn image() -> ContentBlock {
    ContentBlock::Image(ImageContent::new(PNG, "image/png"))
}

fn audio() -> ContentBlock {
    ContentBlock::Audio(AudioContent::new("UklGRiQAAABXQVZF", "audio/wav"))
}

fn embedded_text() -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource::new(
        EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
            "fn main() {}",
            "file:///w/main.rs",
        )),
    ))
}

fn embedded_blob() -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource::new(
        EmbeddedResourceResource::BlobResourceContents(
            BlobResourceContents::new("JVBERi0xLjQ=", "file:///w/spec.pdf")
                .mime_type("application/pdf"),
        ),
    ))
}

fn link() -> ContentBlock {
    ContentBlock::ResourceLink(ResourceLink::new("lib.rs", "file:///w/lib.rs"))
}

/// Sends a prompt of `blocks` and waits for its stop reason.
async fn send(
    cx: &ConnectionTo<Agent>,
    sid: &SessionId,
    blocks: Vec<ContentBlock>,
) -> Result<StopReason, Error> {
    let r = cx
        .send_request(PromptRequest::new(sid.clone(), blocks))
        .block_task()
        .await?;
    Ok(r.stop_reason)
}

/// Asserts `r` is the refusal of a `block` by `target`; answers its message.
fn assert_refused(r: Result<StopReason, Error>, block: &str, target: &str) -> String {
    let e = r.expect_err("the block is refused");
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
    let data = e.data.clone().unwrap_or(Value::Null);
    assert_eq!(data["reason"], "content_unsupported", "{e:?}");
    assert_eq!(data["block"], block, "{e:?}");
    assert_eq!(data["target"], target, "{e:?}");
    e.message
}

/// A home whose `fixture` agent takes `content` (its `--prompt-content`);
/// answers the home and the agent's state directory.
fn content_agent_home(content: &str) -> (Home, String) {
    let home = Home::empty();
    let state = home.add_scripted_agent(&agent_script(), &["--prompt-content", content], "");
    (home, state)
}

/// The prompts the fixture agent received, each as its JSON blocks.
fn received(state: &str) -> Vec<Vec<Value>> {
    std::fs::read_to_string(Path::new(state).join("content.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a recorded prompt"))
        .collect()
}

/// The types of `blocks`.
fn types(blocks: &[Value]) -> Vec<&str> {
    blocks.iter().filter_map(|b| b["type"].as_str()).collect()
}

/// A model server in echo mode and a home whose provider `fix` serves
/// `fixture-model` with `vision` as declared (`None`: undeclared).
fn vision_home(vision: Option<bool>) -> (ModelServer, Home) {
    let (server, home) = model_home("fixture-model");
    if let Some(v) = vision {
        home.write_config(&format!(
            "[providers.fix.capabilities.\"fixture-model\"]\nvision = {v}\n"
        ));
    }
    (server, home)
}

/// The content of the last user message of the last request `server` got.
fn last_user_content(server: &ModelServer) -> Value {
    let requests = server.requests();
    let body = &requests.last().expect("a model request")["body"];
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| m["content"].clone())
        .expect("a user message")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_reaches_an_agent_that_advertises_images() {
    let (home, state) = content_agent_home("image,embedded");
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let init = initialize(&cx, Caps::default()).await?;
        let offered = &init.agent_capabilities.prompt_capabilities;
        assert!(
            offered.image && offered.audio && offered.embedded_context,
            "every kind some target takes is advertised: {offered:?}"
        );
        let sid = new_session(&cx, &ws).await?.session_id;
        let stop = send(&cx, &sid, vec![ContentBlock::from("look at this"), image()]).await?;
        assert_eq!(stop, StopReason::EndTurn);
        assert_eq!(answer(&updates.drain()), "echo: look at this");
        let got = received(&state);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(types(&got[0]), ["text", "image"]);
        assert_eq!(got[0][1]["data"], PNG);
        assert_eq!(got[0][1]["mimeType"], "image/png");
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_to_an_agent_without_image_support_is_refused_and_the_thread_goes_on() {
    let (home, state) = content_agent_home("embedded");
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        let refused = send(&cx, &sid, vec![ContentBlock::from("look"), image()]).await;
        let message = assert_refused(refused, "image", "agent:fixture");
        assert!(message.contains("`image` prompt capability"), "{message}");
        assert!(
            received(&state).is_empty(),
            "nothing reached the agent: {:?}",
            received(&state)
        );
        assert_eq!(prompt(&cx, &sid, "still here").await?, StopReason::EndTurn);
        assert_eq!(answer(&updates.drain()), "echo: still here");
        assert_eq!(received(&state).len(), 1);
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_reach_an_agent_embedded_or_inlined_as_it_takes_them() {
    let blocks = || vec![ContentBlock::from("explain"), embedded_text(), link()];
    let (_guard, ws) = workspace();

    let (home, state) = content_agent_home("embedded");
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, _updates| {
        let sid = open(&cx, &ws).await?;
        assert_eq!(send(&cx, &sid, blocks()).await?, StopReason::EndTurn);
        assert_eq!(
            send(&cx, &sid, vec![ContentBlock::from("read"), embedded_blob()]).await?,
            StopReason::EndTurn
        );
        Ok(())
    })
    .await
    .expect("editor session");
    let got = received(&state);
    assert_eq!(types(&got[0]), ["text", "resource", "resource_link"]);
    assert_eq!(got[0][1]["resource"]["text"], "fn main() {}");
    assert_eq!(got[0][2]["uri"], "file:///w/lib.rs");
    assert_eq!(got[1][1]["resource"]["blob"], "JVBERi0xLjQ=");
    assert_eq!(got[1][1]["resource"]["mimeType"], "application/pdf");

    let (home, state) = content_agent_home("none");
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, _updates| {
        let sid = open(&cx, &ws).await?;
        assert_eq!(send(&cx, &sid, blocks()).await?, StopReason::EndTurn);
        let refused = send(&cx, &sid, vec![ContentBlock::from("read"), embedded_blob()]).await;
        let message = assert_refused(refused, "resource_blob", "agent:fixture");
        assert!(message.contains("`embeddedContext`"), "{message}");
        Ok(())
    })
    .await
    .expect("editor session");
    let got = received(&state);
    assert_eq!(
        got.len(),
        1,
        "the binary resource never reached it: {got:?}"
    );
    assert_eq!(types(&got[0]), ["text", "text", "resource_link"]);
    assert_eq!(
        got[0][1]["text"],
        "<resource uri=\"file:///w/main.rs\">\nfn main() {}\n</resource>"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn audio_reaches_an_agent_that_takes_it_and_no_other() {
    let (_guard, ws) = workspace();
    for (content, takes) in [("audio", true), ("image,embedded", false)] {
        let (home, state) = content_agent_home(content);
        let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
        let sent = run_editor(transport, Editor::default(), async |cx, _updates| {
            let sid = open(&cx, &ws).await?;
            Ok(send(&cx, &sid, vec![ContentBlock::from("listen"), audio()]).await)
        })
        .await
        .expect("editor session");
        if takes {
            assert_eq!(sent.expect("audio taken"), StopReason::EndTurn);
            let got = received(&state);
            assert_eq!(types(&got[0]), ["text", "audio"]);
            assert_eq!(got[0][1]["mimeType"], "audio/wav");
        } else {
            assert_refused(sent, "audio", "agent:fixture");
            assert!(received(&state).is_empty());
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_reaches_a_vision_model_as_an_image_part() {
    let (server, home) = vision_home(Some(true));
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "model:fix/fixture-model"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        let stop = send(&cx, &sid, vec![ContentBlock::from("describe it"), image()]).await?;
        assert_eq!(stop, StopReason::EndTurn);
        assert_eq!(answer(&updates.drain()), "echo: describe it");
        Ok(())
    })
    .await
    .expect("editor session");
    assert_eq!(
        last_user_content(&server),
        json!([
            {"type": "text", "text": "describe it"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}}
        ])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_or_audio_to_a_text_only_model_is_refused_before_any_call() {
    let (_guard, ws) = workspace();
    for (vision, says) in [
        (Some(false), "vision = false"),
        (None, "declare `vision = true`"),
    ] {
        let (server, home) = vision_home(vision);
        let (_hecate, transport) = Hecate::spawn(&home, &["--target", "model:fix/fixture-model"]);
        run_editor(transport, Editor::default(), async |cx, _updates| {
            let sid = open(&cx, &ws).await?;
            let refused = send(&cx, &sid, vec![ContentBlock::from("describe"), image()]).await;
            let message = assert_refused(refused, "image", "model:fix/fixture-model");
            assert!(message.contains(says), "{message}");
            let refused = send(&cx, &sid, vec![audio()]).await;
            assert_refused(refused, "audio", "model:fix/fixture-model");
            Ok(())
        })
        .await
        .expect("editor session");
        assert!(server.requests().is_empty(), "no model call was made");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_reach_a_model_as_context_and_hecates_agent_refuses_images() {
    let (server, home) = vision_home(None);
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "model:fix/fixture-model"]);
    run_editor(transport, Editor::default(), async |cx, _updates| {
        let sid = open(&cx, &ws).await?;
        let blocks = vec![ContentBlock::from("explain"), embedded_text(), link()];
        assert_eq!(send(&cx, &sid, blocks).await?, StopReason::EndTurn);
        let refused = send(&cx, &sid, vec![embedded_blob()]).await;
        assert_refused(refused, "resource_blob", "model:fix/fixture-model");
        Ok(())
    })
    .await
    .expect("editor session");
    assert_eq!(
        last_user_content(&server),
        "explain\n<resource uri=\"file:///w/main.rs\">\nfn main() {}\n</resource>\n\
         [resource: file:///w/lib.rs]"
    );

    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "hecate:fix/fixture-model"]);
    run_editor(transport, Editor::default(), async |cx, _updates| {
        let sid = open(&cx, &ws).await?;
        let refused = send(&cx, &sid, vec![ContentBlock::from("look"), image()]).await;
        let message = assert_refused(refused, "image", "hecate:fix/fixture-model");
        assert!(message.contains("reads text"), "{message}");
        Ok(())
    })
    .await
    .expect("editor session");
}

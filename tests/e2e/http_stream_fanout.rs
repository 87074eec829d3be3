//! One thousand concurrent SSE subscribers to one session (on loopback) all receive
//! the turn's `done`; the feed renders each snapshot once for all of them.

use crate::support::common::{Home, ModelServer};
use crate::support::http::{Api, data, last_message, serve, slow_text};
use futures::future::join_all;
use serde_json::json;
use std::time::Duration;

const SUBSCRIBERS: usize = 1000;
const BOUND: Duration = Duration::from_secs(240);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_subscribers_all_get_the_done() {
    let server = ModelServer::start(Some(json!([slow_text(20, 20)])));
    let home = Home::with_openai(&server);
    let s = serve(&home);
    let api = Api::new(&s);
    let id = api.create_session(json!({})).await;

    let outcome = tokio::time::timeout(BOUND, async {
        let readers = join_all((0..SUBSCRIBERS).map(|_| {
            let (api, id) = (api.clone(), id.clone());
            tokio::spawn(async move {
                let mut sse = api.stream(&id, None).await;
                let first = sse.next(BOUND).await.expect("initial snapshot");
                assert_eq!(first.event, "snapshot");
                sse
            })
        }))
        .await;
        let readers: Vec<_> = readers
            .into_iter()
            .map(|r| r.expect("subscriber task"))
            .collect();
        let stats = api.get("/hecate/v1/system/stats").await;
        assert_eq!(stats.body["data"]["sse_subscribers"], SUBSCRIBERS);

        let post = {
            let (api, id) = (api.clone(), id.clone());
            tokio::spawn(async move { api.say(&id, "for everyone").await.body })
        };
        let finals = join_all(readers.into_iter().map(|mut sse| {
            tokio::spawn(async move {
                let events = sse.until_done(BOUND).await;
                let last = events.last().expect("events").clone();
                assert_eq!(last.event, "done");
                data(&last)
            })
        }))
        .await;
        let posted = post.await.expect("post");
        (finals, posted)
    })
    .await
    .expect("all subscribers finished within the bound");

    let (finals, posted) = outcome;
    assert_eq!(finals.len(), SUBSCRIBERS);
    let expected = last_message(&posted)["content"].clone();
    for f in finals {
        let f = f.expect("subscriber task");
        assert_eq!(f["data"]["status"], "completed");
        assert_eq!(last_message(&f)["content"], expected);
    }
}

//! Streams and channels end to end through the typed views: implemented ones called in process
//! through `Caller`, and the same ones served by `courier::server::Proxy` on 127.0.0.1 and
//! called from another `Caller` over SSE and WebSocket.

use courier::live::{Event, Hub};
use courier::server::Proxy;
use courier::typed::{channel, stream, Channel, ChannelHandlers, ChannelPeer, Group, Stream};
use courier::{ApiDef, Caller, Client};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Tick {
    n: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Said {
    room: String,
    text: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Say {
    text: String,
}

// The process that implements them.

#[derive(courier::Group)]
struct Feeds {
    ticks: Stream<Tick, u64>,
    room: Channel<Said, String, Say>,
}

#[derive(courier::Api)]
struct Served {
    feeds: Group<Feeds>,
}

fn served() -> courier::Api<Served> {
    let feeds = Group::new(Feeds {
        ticks: stream().implement(|every: u64| {
            futures_util::stream::iter(
                (1..=3).map(move |n| Event::new(Tick { n: n * every }).id(n.to_string())),
            )
        }),
        room: channel().implement_handlers(ChannelHandlers::on_message(
            |peer: ChannelPeer<Said, String>, say: Say| async move {
                peer.publish(&Said {
                    room: peer.variables().clone(),
                    text: say.text,
                })
            },
        )),
    })
    .expose(true);
    ApiDef::builder()
        .build_typed(Served { feeds })
        .expect("a valid definition")
}

// Another process, reaching them where `Proxy` serves them: the proxy's wire protocol, the
// variables filling its query.

#[derive(Clone, Serialize)]
struct Address {
    _s: &'static str,
    _g: &'static str,
    _m: &'static str,
    _v: String,
}

impl Address {
    fn of(name: &'static str, variables: impl Serialize) -> Self {
        Self {
            _s: "demo",
            _g: "feeds",
            _m: name,
            _v: serde_json::to_string(&variables).unwrap(),
        }
    }
}

#[derive(courier::Group)]
struct RemoteFeeds {
    ticks: Stream<Tick, Address>,
    room: Channel<Said, Address, Say>,
}

#[derive(courier::Api)]
struct Remote {
    feeds: Group<RemoteFeeds>,
}

fn remote(base_url: &str) -> courier::Api<Remote> {
    let feeds = Group::new(RemoteFeeds {
        ticks: stream().get("/api/sse"),
        room: channel().connect("/api/ws").send(),
    });
    ApiDef::builder()
        .base_url(base_url)
        .build_typed(Remote { feeds })
        .expect("a valid definition")
}

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .expect("within 10 s")
}

#[tokio::test]
async fn implemented_streams_and_channels_run_in_process() {
    let caller = Caller::new(served()).unwrap();
    let ticks: Vec<Tick> = caller
        .feeds()
        .ticks(10)
        .await
        .unwrap()
        .map(|e| e.unwrap().data)
        .collect()
        .await;
    assert_eq!(ticks, [Tick { n: 10 }, Tick { n: 20 }, Tick { n: 30 }]);

    let mut ada = caller.feeds().room("lobby".to_owned()).await.unwrap();
    let mut bob = caller.feeds().room("lobby".to_owned()).await.unwrap();
    let mut cy = caller.feeds().room("attic".to_owned()).await.unwrap();
    ada.send(Say { text: "hi".into() }).unwrap();
    let said = Said {
        room: "lobby".into(),
        text: "hi".into(),
    };
    assert_eq!(within(bob.next()).await.unwrap().unwrap(), said);
    assert_eq!(within(ada.next()).await.unwrap().unwrap(), said);
    cy.send(Say {
        text: "up here".into(),
    })
    .unwrap();
    assert_eq!(within(cy.next()).await.unwrap().unwrap().room, "attic");
}

#[tokio::test]
async fn served_streams_and_channels_reach_another_caller_and_share_topics_in_process() {
    let served = served();
    // The in-process caller and the proxy's client for the source are handed one hub, so they
    // share topics.
    let hub = Hub::local();
    let local = Caller::builder(served.clone())
        .hub(hub.clone())
        .build()
        .unwrap();
    let client = Client::builder(served.def().clone())
        .hub(hub)
        .build()
        .unwrap();
    let app = Proxy::new()
        .source_client("demo", client)
        .ws_path("/api/ws")
        .into_router()
        .expect("the proxy builds");
    let addr = courier_test_support::serve(app).await;
    let caller = Caller::new(remote(&format!("http://{addr}"))).unwrap();

    let events: Vec<Event<Tick>> = caller
        .feeds()
        .ticks(Address::of("ticks", 5))
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    let ticks: Vec<(u64, Option<String>)> = events.into_iter().map(|e| (e.data.n, e.id)).collect();
    assert_eq!(
        ticks,
        [
            (5, Some("1".into())),
            (10, Some("2".into())),
            (15, Some("3".into()))
        ]
    );

    // A socket subscriber and an in-process one share the topic.
    let mut over_the_wire = caller
        .feeds()
        .room(Address::of("room", "lobby"))
        .await
        .unwrap();
    let mut in_process = local.feeds().room("lobby".to_owned()).await.unwrap();
    over_the_wire
        .send(Say {
            text: "hello".into(),
        })
        .unwrap();
    let said = Said {
        room: "lobby".into(),
        text: "hello".into(),
    };
    assert_eq!(within(in_process.next()).await.unwrap().unwrap(), said);
    assert_eq!(within(over_the_wire.next()).await.unwrap().unwrap(), said);
    in_process
        .send(Say {
            text: "back".into(),
        })
        .unwrap();
    assert_eq!(
        within(over_the_wire.next()).await.unwrap().unwrap().text,
        "back"
    );
}

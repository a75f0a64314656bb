//! Streams and channels, end to end: a process implements a stream of ticks and a chat room,
//! serves them with the proxy route on 127.0.0.1, and a `ProxyCaller` — standing in for another
//! process, or a page — subscribes to the stream over SSE and talks in the room over WebSocket
//! through that route, with the same typed views, next to an in-process member of the same room.
//!
//! ```sh
//! cargo run --example live
//! ```

use courier::config::ProxyPaths;
use courier::live::Event;
use courier::routes::Routes;
use courier::server::Proxy;
use courier::typed::{channel, stream, Channel, ChannelHandlers, ChannelPeer, Group, Stream};
use courier::{ApiDef, Caller, ProxyCaller};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Serialize, Deserialize)]
struct Tick {
    n: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct Said {
    room: String,
    text: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Say {
    text: String,
}

// The serving process: `.implement()` the stream and the channel.

#[derive(courier::Group)]
struct Feeds {
    ticks: Stream<Tick, u64>,
    room: Channel<Said, String, Say>,
}

#[derive(courier::Api)]
struct Served {
    feeds: Group<Feeds>,
}

fn served() -> Result<courier::Api<Served>, courier::ConfigurationError> {
    let feeds = Group::new(Feeds {
        ticks: stream().implement(|every: u64| {
            futures_util::stream::iter(1..=3).then(move |n| async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Event::new(Tick { n: n * every }).id(n.to_string())
            })
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
    ApiDef::builder().build_typed(Served { feeds })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The serving process's own caller, and the proxy route on the same client: the sockets
    // served there and the in-process members meet in one room (one hub).
    let served = served()?;
    let routes = Routes::from_api("demo", served.def());
    let local = Caller::new(served)?;
    let app = Proxy::new()
        .source_client("demo", local.client().clone())
        .ws_path("/api/ws")
        .into_router()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    println!("the proxy route serves on http://{addr}");

    // Another process (or a page) calls through the proxy route with the same typed views: the
    // routes record names what the route serves, the caller writes the wire's addresses.
    let paths = ProxyPaths {
        ws: Some("/api/ws".into()),
        ..ProxyPaths::default()
    };
    let remote = ProxyCaller::<Served>::routes(format!("http://{addr}"), routes)
        .proxy_path(paths)
        .build()?;

    // A stream over SSE: typed events with their ids.
    let mut ticks = remote.feeds().ticks(10).await?;
    while let Some(event) = ticks.next().await {
        let event = event?;
        println!("tick {:?}: {:?}", event.id, event.data);
    }

    // A channel over WebSocket, and an in-process member of the same room.
    let mut here = local.feeds().room("lobby".to_owned()).await?;
    let mut there = remote.feeds().room("lobby".to_owned()).await?;
    there.send(Say {
        text: "hello from the socket".into(),
    })?;
    println!("in process: {:?}", here.next().await.transpose()?);
    here.send(Say {
        text: "hello from in process".into(),
    })?;
    println!("over the socket: {:?}", there.next().await.transpose()?);
    println!("over the socket: {:?}", there.next().await.transpose()?);
    Ok(())
}

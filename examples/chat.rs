//! A chat room served by several processes at once: each serves the same rooms on a hub over a
//! topic bus, so members joined on different servers talk to each other — what an app behind a
//! load balancer needs. With `--redis` the bus is Redis, shared across processes; the demo (no
//! arguments) runs two servers in this process on one in-process bus instead.
//!
//! ```sh
//! cargo run --example chat                     # the demo: two servers, a member on each
//!
//! # Two servers sharing a Redis, and a member on each (type a line to say it):
//! cargo run --example chat -- --listen 127.0.0.1:8081 --redis redis://127.0.0.1:6379
//! cargo run --example chat -- --listen 127.0.0.1:8082 --redis redis://127.0.0.1:6379
//! cargo run --example chat -- --join http://127.0.0.1:8081 --room lobby --user ada
//! cargo run --example chat -- --join http://127.0.0.1:8082 --room lobby --user bob
//! ```

use courier::live::{Hub, LocalBus};
use courier::server::Proxy;
use courier::typed::{channel, Channel, ChannelHandlers, ChannelPeer, Group};
use courier::{ApiDef, ConfigurationError, ProxyCaller};
use courier_redis::RedisBus;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// Who joins which room.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Join {
    room: String,
    user: String,
}

/// What a member says.
#[derive(Debug, Serialize, Deserialize)]
struct Say {
    text: String,
}

/// What everyone in the room hears.
#[derive(Debug, Serialize, Deserialize)]
struct Said {
    user: String,
    text: String,
}

#[derive(courier::Group)]
struct Rooms {
    room: Channel<Said, Join, Say>,
}

#[derive(courier::Api)]
struct Chat {
    rooms: Group<Rooms>,
}

/// The chat: members of one room share a topic; what one says is published to all of them,
/// on every server sharing the hub's bus.
fn chat() -> Result<courier::Api<Chat>, ConfigurationError> {
    let rooms = Group::new(Rooms {
        room: channel()
            .implement_handlers(
                ChannelHandlers::on_message(|peer: ChannelPeer<Said, Join>, say: Say| async move {
                    let user = peer.variables().user.clone();
                    peer.publish(&Said {
                        user,
                        text: say.text,
                    })
                })
                // To the new member alone: once it has this, it hears the room.
                .on_join(|peer: ChannelPeer<Said, Join>| async move {
                    let join = peer.variables();
                    peer.send(&Said {
                        user: "chat".to_owned(),
                        text: format!("welcome to `{}`, {}", join.room, join.user),
                    })
                }),
            )
            .topic(|join: &Join| join.room.clone()),
    })
    .expose(true);
    ApiDef::builder().build_typed(Chat { rooms })
}

/// Serves the chat on `listener`, its rooms on `hub`.
async fn serve(listener: tokio::net::TcpListener, hub: Hub) -> Result<(), courier::BoxError> {
    let proxy = Proxy::new()
        .source("chat", chat()?.def().clone())
        .hub(hub)
        .ws_path("/api/ws");
    proxy.serve(listener).await?;
    Ok(())
}

/// A member of `room` on the server at `url`, through the proxy caller.
async fn join(
    url: &str,
    room: &str,
    user: &str,
) -> Result<courier::live::ws::Connection<Said, Say>, courier::BoxError> {
    let caller = ProxyCaller::source(url, "chat", chat()?)
        .proxy_path(courier::config::ProxyPaths {
            ws: Some("/api/ws".into()),
            ..Default::default()
        })
        .build()?;
    let join = Join {
        room: room.to_owned(),
        user: user.to_owned(),
    };
    Ok(caller.rooms().room(join).await?)
}

/// The value after `flag` in the arguments.
fn arg(flag: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1).cloned())
}

#[tokio::main]
async fn main() -> Result<(), courier::BoxError> {
    if let Some(url) = arg("--join") {
        let room = arg("--room").unwrap_or_else(|| "lobby".to_owned());
        let user = arg("--user").unwrap_or_else(|| "guest".to_owned());
        let mut member = join(&url, &room, &user).await?;
        let sender = member.sender();
        println!("joined `{room}` on {url} as {user}; type a line to say it");
        std::thread::spawn(move || {
            for text in std::io::stdin().lines().map_while(Result::ok) {
                if sender.send(Say { text }).is_err() {
                    break;
                }
            }
        });
        while let Some(said) = member.next().await {
            let said = said?;
            println!("{}: {}", said.user, said.text);
        }
        return Ok(());
    }

    if let Some(listen) = arg("--listen") {
        let hub = match arg("--redis") {
            Some(redis) => Hub::new(RedisBus::connect(redis).await?),
            None => Hub::local(),
        };
        let listener = tokio::net::TcpListener::bind(listen.parse::<SocketAddr>()?).await?;
        println!("listening on http://{}", listener.local_addr()?);
        return serve(listener, hub).await;
    }

    // The demo: two servers, each with a hub of its own over one bus (in process here;
    // `--redis` shares one across processes), a member joined on each.
    let bus = LocalBus::new();
    let mut servers = Vec::new();
    for _ in 0..2 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        servers.push(format!("http://{}", listener.local_addr()?));
        tokio::spawn(serve(listener, Hub::new(bus.clone())));
    }
    println!("two servers, one room: {} and {}", servers[0], servers[1]);
    let mut ada = join(&servers[0], "lobby", "ada").await?;
    let mut bob = join(&servers[1], "lobby", "bob").await?;
    for member in [&mut ada, &mut bob] {
        if let Some(welcome) = member.next().await.transpose()? {
            println!("{}", welcome.text);
        }
    }
    ada.send(Say {
        text: "hello from the first server".into(),
    })?;
    for (who, member) in [("ada", &mut ada), ("bob", &mut bob)] {
        if let Some(said) = member.next().await.transpose()? {
            println!("{who} hears {}: {}", said.user, said.text);
        }
    }
    bob.send(Say {
        text: "and hello from the second".into(),
    })?;
    for (who, member) in [("ada", &mut ada), ("bob", &mut bob)] {
        if let Some(said) = member.next().await.transpose()? {
            println!("{who} hears {}: {}", said.user, said.text);
        }
    }
    Ok(())
}

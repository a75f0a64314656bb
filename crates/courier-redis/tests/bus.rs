//! The Redis topic bus against a real `redis-server` of the test's own: two instances (two
//! buses, two hubs) sharing topics, one Redis subscription per topic in use, a Redis that goes
//! away and comes back, and the bounds that keep memory in check meanwhile.

use courier_core::{ChannelEndpoint, ChannelHandler, ChannelHandlers, Peer};
use courier_live::{Hub, JoinOptions, Member, Outbound, TopicBus, MISSED};
use courier_redis::RedisBus;
use courier_test_support::redis::RedisServer;
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A two-way channel whose every message is published to the room.
fn chat() -> ChannelEndpoint {
    let handlers = ChannelHandlers::on_message(|peer: Arc<dyn Peer>, message: Value| async move {
        peer.publish(json!({ "said": message }))
    });
    ChannelEndpoint::implement(ChannelHandler::Duplex(handlers)).topic_variables(["room"])
}

async fn join(hub: &Hub, channel: &ChannelEndpoint, room: &str) -> Member {
    hub.join(
        "chat.room",
        channel,
        json!({ "room": room }),
        JoinOptions::default(),
    )
    .await
    .expect("joins")
}

async fn next(member: &mut Member) -> Outbound {
    tokio::time::timeout(Duration::from_secs(10), member.recv())
        .await
        .expect("a message within 10 s")
        .expect("the member is open")
}

/// Nothing more arrives within a while.
async fn quiet(member: &mut Member) {
    if let Ok(more) = tokio::time::timeout(Duration::from_millis(300), member.recv()).await {
        panic!("nothing more was expected, got {more:?}");
    }
}

fn said(text: &str) -> Outbound {
    Outbound::Message {
        data: json!({ "said": text }),
    }
}

/// Waits until `check` holds, for up to 10 s.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(Instant::now() < deadline, "not within 10 s: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Two instances on one Redis, each with a member of `room`, their Redis subscriptions taken.
async fn two_instances(redis: &RedisServer) -> (RedisBus, RedisBus, Hub, Hub) {
    let a = RedisBus::connect(redis.url()).await.unwrap();
    let b = RedisBus::connect(redis.url()).await.unwrap();
    assert_ne!(a.instance(), b.instance());
    let (hub_a, hub_b) = (Hub::new(a.clone()), Hub::new(b.clone()));
    (a, b, hub_a, hub_b)
}

#[tokio::test]
async fn messages_cross_instances_and_each_arrives_once() {
    let redis = RedisServer::start();
    let (a, b, hub_a, hub_b) = two_instances(&redis).await;
    let channel = chat();
    let mut on_a = join(&hub_a, &channel, "lobby").await;
    let mut on_b = join(&hub_b, &channel, "lobby").await;
    let mut elsewhere = join(&hub_b, &channel, "kitchen").await;
    let topic = Hub::channel_topic("chat.room", r#"{"room":"lobby"}"#);
    let channel_name = format!("courier:{topic}");
    eventually("both instances subscribed on Redis", || {
        redis.subscribers(&channel_name) == 2
    })
    .await;

    on_a.send(json!("hello from a")).await.unwrap();
    assert_eq!(next(&mut on_a).await, said("hello from a"), "its own, once");
    assert_eq!(next(&mut on_b).await, said("hello from a"));
    on_b.send(json!("hello from b")).await.unwrap();
    assert_eq!(next(&mut on_b).await, said("hello from b"));
    assert_eq!(next(&mut on_a).await, said("hello from b"));
    // From outside the handlers: the app publishes on one instance.
    hub_b.publish(&topic, json!({ "said": "news" }));
    assert_eq!(next(&mut on_a).await, said("news"));
    assert_eq!(next(&mut on_b).await, said("news"));
    quiet(&mut on_a).await;
    quiet(&mut on_b).await;
    quiet(&mut elsewhere).await;
    assert_eq!(a.stats().dropped + b.stats().dropped, 0);
}

#[tokio::test]
async fn one_redis_subscription_per_topic_in_use_dropped_with_its_last_subscriber() {
    let redis = RedisServer::start();
    let bus = RedisBus::connect(redis.url()).await.unwrap();
    let channel_name = "courier:news";
    let first = bus.subscribe("news", 16);
    let second = bus.subscribe("news", 16);
    eventually("one subscription on Redis", || {
        bus.stats().topics == 1 && redis.subscribers(channel_name) == 1
    })
    .await;
    assert_eq!(bus.stats().local_topics, 1);
    drop(first);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(redis.subscribers(channel_name), 1, "one subscriber is left");
    drop(second);
    eventually("no subscription left", || {
        bus.stats().topics == 0 && redis.subscribers(channel_name) == 0
    })
    .await;
    assert_eq!(bus.stats().local_topics, 0);
}

#[tokio::test]
async fn a_followed_topic_crosses_instances() {
    let redis = RedisServer::start();
    let (a, _b, hub_a, hub_b) = two_instances(&redis).await;
    let mut events = hub_b.follow("news", 16);
    eventually("b subscribed", || redis.subscribers("courier:news") == 1).await;
    hub_a.publish("news", json!({ "headline": "courier 1.0" }));
    let event = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("an event within 10 s")
        .unwrap()
        .unwrap();
    assert_eq!(event.data, json!({ "headline": "courier 1.0" }));
    assert_eq!(a.stats().dropped, 0);
}

#[tokio::test]
async fn after_redis_restarts_subscribers_are_told_of_the_gap_and_traffic_resumes() {
    let mut redis = RedisServer::start();
    let (a, b, hub_a, hub_b) = two_instances(&redis).await;
    let channel = chat();
    let mut on_a = join(&hub_a, &channel, "lobby").await;
    let mut on_b = join(&hub_b, &channel, "lobby").await;
    let channel_name = format!(
        "courier:{}",
        Hub::channel_topic("chat.room", r#"{"room":"lobby"}"#)
    );
    eventually("both subscribed", || redis.subscribers(&channel_name) == 2).await;

    redis.stop();
    eventually("both buses saw the connection drop", || {
        !a.stats().connected && !b.stats().connected
    })
    .await;
    // Published while Redis is away: it reaches this instance's subscriber only.
    on_a.send(json!("while redis is down")).await.unwrap();
    assert_eq!(next(&mut on_a).await, said("while redis is down"));
    redis.restart();

    // Once each bus has its subscription back, its members hear of the gap: 1012.
    for member in [&mut on_a, &mut on_b] {
        match next(member).await {
            Outbound::Close { code, reason } => {
                assert_eq!(code, MISSED);
                assert!(reason.contains("may have been missed"), "{reason}");
            }
            Outbound::Message { data } => panic!("the lost message arrived after all: {data}"),
        }
    }
    assert!(a.stats().gaps >= 1 && b.stats().gaps >= 1);
    assert!(a.stats().connected && b.stats().connected);

    // They reconnect (join again), as a client does after 1012, and traffic crosses again. A
    // late word from the outage may still come first — the others told of a's lost message
    // once a can publish again (1012 again), or that message itself, if a's publish waited for
    // the connection — and a member told again joins again.
    let mut tries = 0;
    'rejoin: loop {
        tries += 1;
        assert!(tries <= 5, "traffic did not resume");
        let mut on_a = join(&hub_a, &channel, "lobby").await;
        let mut on_b = join(&hub_b, &channel, "lobby").await;
        eventually("both subscribed again", || {
            redis.subscribers(&channel_name) == 2
        })
        .await;
        on_b.send(json!("back")).await.unwrap();
        for member in [&mut on_b, &mut on_a] {
            loop {
                match next(member).await {
                    Outbound::Close { code, .. } => {
                        assert_eq!(code, MISSED);
                        continue 'rejoin;
                    }
                    message if message == said("back") => break,
                    message => assert_eq!(message, said("while redis is down")),
                }
            }
        }
        break;
    }
}

#[tokio::test]
async fn while_redis_is_away_the_publish_queue_is_bounded_and_the_others_are_told() {
    let mut redis = RedisServer::start();
    let a = RedisBus::builder(redis.url())
        .queue(8)
        .connect()
        .await
        .unwrap();
    let b = RedisBus::connect(redis.url()).await.unwrap();
    let hub_b = Hub::new(b.clone());
    let channel = chat();
    let mut on_b = join(&hub_b, &channel, "lobby").await;
    let topic = Hub::channel_topic("chat.room", r#"{"room":"lobby"}"#);
    eventually("b subscribed", || {
        redis.subscribers(&format!("courier:{topic}")) == 1
    })
    .await;
    redis.stop();
    eventually("a saw the connection drop", || !a.stats().connected).await;
    // Far more than the queue holds: what does not fit is dropped and counted, not kept.
    for n in 0..2000 {
        a.publish(&topic, Outbound::Message { data: json!(n) });
    }
    assert!(a.stats().dropped >= 2000 - 64 - 8, "{:?}", a.stats());
    redis.restart();
    // b hears of the gap: its own reconnection's, or a's lost messages'.
    match next(&mut on_b).await {
        Outbound::Close { code, .. } => assert_eq!(code, MISSED),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_redis_that_cannot_be_reached_is_an_error_naming_it_without_its_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = RedisBus::builder(format!("redis://:hunter2@127.0.0.1:{port}"))
        .connect_timeout(Duration::from_millis(500))
        .connect()
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
    let err = RedisBus::connect("not a url").await.unwrap_err();
    assert!(err.to_string().contains("not a url"), "{err}");
}

#[tokio::test]
async fn a_wrong_password_or_a_closed_port_is_told_at_once() {
    let redis = RedisServer::start();
    redis.command("CONFIG SET requirepass rightpw");
    let url = redis.url().replace("redis://", "redis://:wrongpw@");
    let started = Instant::now();
    let err = RedisBus::connect(url).await.unwrap_err().to_string();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(err.to_ascii_lowercase().contains("pass"), "{err}");
    assert!(!err.contains("wrongpw"), "{err}");

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = Instant::now();
    let err = RedisBus::connect(format!("redis://127.0.0.1:{port}"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(!err.contains("no answer"), "refused, not a timeout: {err}");
}

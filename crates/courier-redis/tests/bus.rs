//! The Redis topic bus against a real `redis-server` of the test's own: two instances (two
//! buses, two hubs) sharing topics, one Redis subscription per topic in use, a Redis that goes
//! away and comes back, and the bounds that keep memory in check meanwhile; with a history,
//! members that come back to either instance recover what they missed, and are told when they
//! cannot.

use courier_core::{ChannelEndpoint, ChannelHandler, ChannelHandlers, Peer};
use courier_live::{
    History, Hub, JoinError, JoinOptions, Member, Outbound, Position, TopicBus, MISSED,
    MISSED_REASON,
};
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
    Outbound::message(json!({ "said": text }))
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
    assert_eq!(a.history(), None, "no history unless asked for");
}

#[tokio::test]
async fn one_redis_subscription_per_topic_in_use_dropped_with_its_last_subscriber() {
    let redis = RedisServer::start();
    let bus = RedisBus::connect(redis.url()).await.unwrap();
    let channel_name = "courier:news";
    let first = bus.subscribe("news", None, 16);
    let second = bus.subscribe("news", None, 16);
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
            Outbound::Message { data, .. } => panic!("the lost message arrived after all: {data}"),
            other => panic!("neither a message nor a close: {other:?}"),
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
        a.publish(&topic, Outbound::message(json!(n)));
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

/// An instance on `redis` keeping `history`, its queues of `queue` messages (the default when
/// `None`).
async fn with_history(redis: &RedisServer, history: History, queue: Option<usize>) -> RedisBus {
    let builder = RedisBus::builder(redis.url()).history(history);
    let builder = match queue {
        Some(queue) => builder.queue(queue),
        None => builder,
    };
    builder.connect().await.unwrap()
}

/// Two instances on one Redis, each keeping `history`.
async fn two_with_history(redis: &RedisServer, history: History) -> (RedisBus, RedisBus, Hub, Hub) {
    let a = with_history(redis, history, None).await;
    let b = with_history(redis, history, None).await;
    assert_eq!(a.history(), Some(history));
    let (hub_a, hub_b) = (Hub::new(a.clone()), Hub::new(b.clone()));
    (a, b, hub_a, hub_b)
}

fn lobby() -> String {
    Hub::channel_topic("chat.room", r#"{"room":"lobby"}"#)
}

async fn join_since(
    hub: &Hub,
    channel: &courier_core::ChannelEndpoint,
    since: Position,
) -> Result<Member, JoinError> {
    hub.join(
        "chat.room",
        channel,
        json!({ "room": "lobby" }),
        JoinOptions::default().since(since),
    )
    .await
}

/// The member's first item: where it begins.
async fn start(member: &mut Member) -> Position {
    match next(member).await {
        Outbound::Start { at } => at,
        other => panic!("not a start: {other:?}"),
    }
}

/// The next message's data and position.
async fn positioned(member: &mut Member) -> (Value, Position) {
    match next(member).await {
        Outbound::Message { data, at: Some(at) } => (data, at),
        other => panic!("not a message with a position: {other:?}"),
    }
}

fn missed(result: Result<Member, JoinError>) -> String {
    match result {
        Err(JoinError::Missed(reason)) => {
            assert!(reason.starts_with(MISSED_REASON), "{reason}");
            reason
        }
        Err(e) => panic!("refused otherwise: {e}"),
        Ok(_) => panic!("joined"),
    }
}

#[tokio::test]
async fn a_member_that_comes_back_to_an_instance_recovers_what_another_published() {
    let redis = RedisServer::start();
    let history = History::new(1_000, Duration::from_secs(60));
    let (a, b, hub_a, hub_b) = two_with_history(&redis, history).await;
    let channel = chat();
    let mut on_a = join(&hub_a, &channel, "lobby").await;
    let at = start(&mut on_a).await;
    assert_eq!(at.offset(), 0, "nothing published yet");
    drop(on_a);
    let mut on_b = join(&hub_b, &channel, "lobby").await;
    assert_eq!(
        start(&mut on_b).await,
        at,
        "one epoch, whichever instance reads it"
    );

    let topic = lobby();
    for n in 0..200 {
        hub_b.publish(&topic, json!(n));
    }
    // B's own member has them from Redis, in order, each with its position.
    for n in 0..200u64 {
        let (data, position) = positioned(&mut on_b).await;
        assert_eq!(
            (data, position.epoch(), position.offset()),
            (json!(n), at.epoch(), n + 1)
        );
    }

    let mut back = join_since(&hub_a, &channel, at.clone())
        .await
        .expect("rejoins");
    assert_eq!(start(&mut back).await, at);
    for n in 0..200u64 {
        let (data, position) = positioned(&mut back).await;
        assert_eq!((data, position.offset()), (json!(n), n + 1));
    }
    // Then the live ones, once each, on both instances.
    back.send(json!("live")).await.unwrap();
    for member in [&mut back, &mut on_b] {
        let (data, position) = positioned(member).await;
        assert_eq!((data, position.offset()), (json!({ "said": "live" }), 201));
    }
    quiet(&mut back).await;
    quiet(&mut on_b).await;
    // A member back from the latest position recovers nothing and misses nothing.
    let latest = Position::new(at.epoch(), 201).unwrap();
    let mut again = join_since(&hub_b, &channel, latest.clone()).await.unwrap();
    assert_eq!(start(&mut again).await, latest);
    quiet(&mut again).await;
    assert_eq!(a.stats().dropped + b.stats().dropped, 0);
    assert_eq!(a.stats().gaps + b.stats().gaps, 0);
}

#[tokio::test]
async fn positions_the_history_does_not_hold_are_refused_as_missed() {
    let redis = RedisServer::start();
    let history = History::new(5, Duration::from_secs(60));
    let (_a, _b, hub_a, hub_b) = two_with_history(&redis, history).await;
    let channel = chat();
    let mut watcher = join(&hub_b, &channel, "lobby").await;
    let at = start(&mut watcher).await;
    for n in 0..20 {
        hub_a.publish(&lobby(), json!(n));
    }
    for _ in 0..20 {
        positioned(&mut watcher).await;
    }
    let epoch = at.epoch();
    let reason = missed(join_since(&hub_a, &channel, Position::new(epoch, 0).unwrap()).await);
    assert!(reason.contains("no longer holds"), "{reason}");
    let reason = missed(join_since(&hub_b, &channel, Position::new("another", 3).unwrap()).await);
    assert!(reason.contains("begun again"), "{reason}");
    let reason = missed(join_since(&hub_a, &channel, Position::new(epoch, 21).unwrap()).await);
    assert!(reason.contains("past"), "{reason}");
    // The last `count` are there.
    let mut back = join_since(&hub_a, &channel, Position::new(epoch, 15).unwrap())
        .await
        .expect("the last five are kept");
    start(&mut back).await;
    for n in 15..20 {
        assert_eq!(positioned(&mut back).await.0, json!(n));
    }
}

#[tokio::test]
async fn a_redis_restarted_without_persistence_is_a_gap_and_a_new_epoch() {
    let mut redis = RedisServer::start();
    let history = History::new(1_000, Duration::from_secs(60));
    let (a, b, hub_a, hub_b) = two_with_history(&redis, history).await;
    let channel = chat();
    let mut on_a = join(&hub_a, &channel, "lobby").await;
    let mut on_b = join(&hub_b, &channel, "lobby").await;
    start(&mut on_a).await;
    start(&mut on_b).await;
    on_a.send(json!("hi")).await.unwrap();
    let (_, old) = positioned(&mut on_a).await;
    assert_eq!(positioned(&mut on_b).await.1, old);

    redis.restart();
    for member in [&mut on_a, &mut on_b] {
        match next(member).await {
            Outbound::Close { code, reason } => {
                assert_eq!(code, MISSED);
                assert!(reason.starts_with("messages were missed: "), "{reason}");
            }
            other => panic!("not told of the gap: {other:?}"),
        }
    }
    assert!(a.stats().gaps >= 1 && b.stats().gaps >= 1);
    let reason = missed(join_since(&hub_a, &channel, old.clone()).await);
    assert!(reason.contains("begun again"), "{reason}");
    // A fresh join begins in the new history, and traffic flows.
    let mut fresh = join(&hub_b, &channel, "lobby").await;
    let at = start(&mut fresh).await;
    assert_ne!(at.epoch(), old.epoch());
    fresh.send(json!("back")).await.unwrap();
    let (data, position) = positioned(&mut fresh).await;
    assert_eq!(data, json!({ "said": "back" }));
    assert_eq!(
        (position.epoch(), position.offset()),
        (at.epoch(), at.offset() + 1)
    );
}

#[tokio::test]
async fn a_message_older_than_the_age_is_not_recovered() {
    let redis = RedisServer::start();
    let history = History::new(1_000, Duration::from_secs(2));
    let (_a, _b, hub_a, hub_b) = two_with_history(&redis, history).await;
    let channel = chat();
    let mut watcher = join(&hub_b, &channel, "lobby").await;
    let at = start(&mut watcher).await;
    // Each within the age of the one before, so the stream itself never expires.
    for n in 0..3 {
        if n > 0 {
            tokio::time::sleep(Duration::from_millis(1_200)).await;
        }
        hub_a.publish(&lobby(), json!(n));
        positioned(&mut watcher).await;
    }
    let reason = missed(join_since(&hub_a, &channel, at.clone()).await);
    assert!(reason.contains("no longer holds"), "{reason}");
    let mut back = join_since(&hub_a, &channel, Position::new(at.epoch(), 1).unwrap())
        .await
        .expect("the two younger ones are kept");
    start(&mut back).await;
    assert_eq!(positioned(&mut back).await.0, json!(1));
    assert_eq!(positioned(&mut back).await.0, json!(2));
}

#[tokio::test]
async fn messages_lost_on_the_way_out_leave_a_gap_in_the_history() {
    let redis = RedisServer::start();
    let history = History::new(10_000, Duration::from_secs(60));
    let a = with_history(&redis, history, Some(8)).await;
    let b = with_history(&redis, history, None).await;
    let hub_b = Hub::new(b.clone());
    let channel = chat();
    let mut on_b = join(&hub_b, &channel, "lobby").await;
    let at = start(&mut on_b).await;
    // Far more than the queue holds, at once: what does not fit is dropped.
    for n in 0..2000 {
        a.publish(&lobby(), Outbound::message(json!(n)));
    }
    assert!(a.stats().dropped > 0, "{:?}", a.stats());
    // b's member has what went out, then hears of the gap.
    let marker = loop {
        match next(&mut on_b).await {
            Outbound::Message { at: Some(_), .. } => {}
            Outbound::Close { code, reason } => {
                assert_eq!(code, MISSED);
                assert!(reason.contains("a publisher lost messages"), "{reason}");
                break reason;
            }
            other => panic!("{other:?}"),
        }
    };
    // And a member that comes back from before the gap cannot recover across it.
    let reason = missed(join_since(&hub_b, &channel, at).await);
    assert!(
        reason.contains("lost messages"),
        "{reason} (told: {marker})"
    );
}

#[tokio::test]
async fn with_a_history_a_redis_out_of_reach_is_told_within_seconds() {
    let mut redis = RedisServer::start();
    let history = History::new(100, Duration::from_secs(60));
    let bus = with_history(&redis, history, None).await;
    let hub = Hub::new(bus.clone());
    redis.stop();
    eventually("the bus saw the connection drop", || !bus.stats().connected).await;
    let started = Instant::now();
    let reason = missed(
        hub.join(
            "chat.room",
            &chat(),
            json!({ "room": "lobby" }),
            JoinOptions::default(),
        )
        .await,
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert!(reason.contains("Redis"), "{reason}");
    drop(bus);
}

#[tokio::test]
async fn messages_missed_while_the_connection_was_down_are_fetched_from_the_history() {
    let redis = RedisServer::start();
    let history = History::new(1_000, Duration::from_secs(60));
    let (a, _b, hub_a, hub_b) = two_with_history(&redis, history).await;
    let channel = chat();
    let mut on_a = join(&hub_a, &channel, "lobby").await;
    start(&mut on_a).await;
    // b publishes steadily; meanwhile a's connection (only a subscribes) is dropped, and what
    // b published until a had its subscription back comes from the history.
    for n in 0..100 {
        if n == 20 {
            assert!(redis.command("CLIENT KILL TYPE pubsub").starts_with(":1"));
        }
        hub_b.publish(&lobby(), json!(n));
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    for n in 0..100u64 {
        let (data, position) = positioned(&mut on_a).await;
        assert_eq!((data, position.offset()), (json!(n), n + 1));
    }
    quiet(&mut on_a).await;
    assert!(a.stats().recovered > 0, "{:?}", a.stats());
    assert_eq!(a.stats().gaps, 0);
}

#[tokio::test]
async fn messages_dropped_from_a_full_inbox_are_fetched_from_the_history() {
    let redis = RedisServer::start();
    let history = History::new(1_000, Duration::from_secs(60));
    let a = with_history(&redis, history, Some(1)).await;
    let b = with_history(&redis, history, None).await;
    let (hub_a, hub_b) = (Hub::new(a.clone()), Hub::new(b));
    let channel = chat();
    let mut on_a = hub_a
        .join(
            "chat.room",
            &channel,
            json!({ "room": "lobby" }),
            JoinOptions::default().buffer(1_000),
        )
        .await
        .unwrap();
    start(&mut on_a).await;
    for n in 0..500 {
        hub_b.publish(&lobby(), json!(n));
    }
    for n in 0..500u64 {
        let (data, position) = positioned(&mut on_a).await;
        assert_eq!((data, position.offset()), (json!(n), n + 1));
    }
    quiet(&mut on_a).await;
    assert_eq!(a.stats().gaps, 0, "{:?}", a.stats());
}

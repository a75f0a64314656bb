use super::*;
use courier_core::BoxError;
use courier_core::{ChannelEndpoint, ChannelHandler, ChannelHandlers, Peer, PeerHandler};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn message(data: Value) -> Option<Outbound> {
    Some(Outbound::message(data))
}

async fn recv(member: &mut Member) -> Option<Outbound> {
    tokio::time::timeout(Duration::from_secs(5), member.recv())
        .await
        .expect("a message within 5 s")
}

/// A push channel counting its starts; each run pushes its topic then waits for `release`.
fn counted_push(starts: Arc<AtomicUsize>, release: Arc<tokio::sync::Notify>) -> ChannelEndpoint {
    ChannelEndpoint::implement(ChannelHandler::push(move |request| {
        starts.fetch_add(1, Ordering::SeqCst);
        let release = release.clone();
        let first = futures_util::stream::once(async move {
            Ok::<_, BoxError>(json!({ "topic": request.topic }))
        });
        let rest = futures_util::stream::once(async move {
            release.notified().await;
            Ok(json!("released"))
        });
        first.chain(rest)
    }))
    .topic_variables(["room"])
}

#[tokio::test]
async fn a_push_handler_runs_once_per_topic_and_topics_are_isolated() {
    let starts = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(tokio::sync::Notify::new());
    let channel = counted_push(starts.clone(), release.clone());
    let hub = Hub::local();
    let join = |room: &str, user: &str| {
        hub.join(
            "chat.ticker",
            &channel,
            json!({ "room": room, "user": user }),
            JoinOptions::default(),
        )
    };
    let mut a1 = join("a", "ada").await.unwrap();
    let mut a2 = join("a", "bob").await.unwrap();
    let mut b1 = join("b", "cy").await.unwrap();
    assert_eq!(starts.load(Ordering::SeqCst), 2, "one run per topic");
    assert_eq!(hub.running(), 2);
    // The second member of `a` joined after the first message may have gone: read what is
    // left of each, then release both runs.
    assert_eq!(
        recv(&mut a1).await,
        message(json!({ "topic": "{\"room\":\"a\"}" }))
    );
    assert_eq!(
        recv(&mut b1).await,
        message(json!({ "topic": "{\"room\":\"b\"}" }))
    );
    release.notify_waiters();
    release.notify_one();
    release.notify_one();
    let mut a2_seen = Vec::new();
    while let Some(out) = recv(&mut a2).await {
        a2_seen.push(out);
    }
    assert!(a2_seen.contains(&Outbound::message(json!("released"))));
    assert!(matches!(
        a2_seen.last(),
        Some(Outbound::Close { code: 1000, .. })
    ));
    assert!(a2_seen.iter().all(
        |m| !matches!(m, Outbound::Message { data, .. } if data.to_string().contains("\\\"b\\\""))
    ));
}

#[tokio::test]
async fn the_run_stops_when_the_last_member_leaves_and_topics_are_removed() {
    let starts = Arc::new(AtomicUsize::new(0));
    let channel = counted_push(starts.clone(), Arc::new(tokio::sync::Notify::new()));
    let bus = LocalBus::new();
    let hub = Hub::new(bus.clone());
    let one = hub
        .join(
            "c",
            &channel,
            json!({ "room": "a" }),
            JoinOptions::default(),
        )
        .await
        .unwrap();
    let two = hub
        .join(
            "c",
            &channel,
            json!({ "room": "a" }),
            JoinOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!((hub.running(), bus.topics(), bus.subscribers()), (1, 1, 2));
    drop(one);
    assert_eq!((hub.running(), bus.subscribers()), (1, 1));
    drop(two);
    assert_eq!((hub.running(), bus.topics()), (0, 0));
    // A new member starts a new run.
    let _three = hub
        .join(
            "c",
            &channel,
            json!({ "room": "a" }),
            JoinOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(starts.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_failing_push_handler_closes_with_1011() {
    let channel = ChannelEndpoint::implement(ChannelHandler::push(|_| {
        futures_util::stream::iter([
            Ok(json!(1)),
            Err::<Value, BoxError>("the feed is gone".into()),
        ])
    }));
    let mut member = Hub::local()
        .join("c", &channel, Value::Null, JoinOptions::default())
        .await
        .unwrap();
    assert_eq!(recv(&mut member).await, message(json!(1)));
    assert_eq!(
        recv(&mut member).await,
        Some(Outbound::Close {
            code: 1011,
            reason: "the feed is gone".into()
        })
    );
    assert_eq!(member.recv().await, None);
}

fn chat(log: Arc<Mutex<Vec<String>>>) -> ChannelEndpoint {
    let joins = log.clone();
    let leaves = log.clone();
    let handlers = ChannelHandlers::on_message(move |peer: Arc<dyn Peer>, message: Value| {
        let log = log.clone();
        async move {
            log.lock().unwrap().push(format!("message {}", message));
            if message == json!("whoami") {
                peer.send(json!({ "you": peer.variables() }))
            } else {
                peer.publish(json!({ "from": peer.variables(), "said": message }))
            }
        }
    })
    .on_join(PeerHandler::new(move |peer: Arc<dyn Peer>| {
        let log = joins.clone();
        async move {
            if peer.variables()["user"] == "mallory" {
                return Err::<(), BoxError>("not welcome".into());
            }
            log.lock()
                .unwrap()
                .push(format!("join {}", peer.variables()["user"]));
            Ok(())
        }
    }))
    .on_leave(PeerHandler::new(move |peer: Arc<dyn Peer>| {
        let log = leaves.clone();
        async move {
            log.lock()
                .unwrap()
                .push(format!("leave {}", peer.variables()["user"]));
            Ok(())
        }
    }));
    ChannelEndpoint::implement(ChannelHandler::Duplex(handlers)).topic_variables(["room"])
}

#[tokio::test]
async fn two_way_channels_run_their_handlers_in_order() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let channel = chat(log.clone());
    let hub = Hub::local();
    let mut ada = hub
        .join(
            "chat.room",
            &channel,
            json!({ "room": "a", "user": "ada" }),
            JoinOptions::default(),
        )
        .await
        .unwrap();
    let mut bob = hub
        .join(
            "chat.room",
            &channel,
            json!({ "room": "a", "user": "bob" }),
            JoinOptions::default(),
        )
        .await
        .unwrap();
    let mut cy = hub
        .join(
            "chat.room",
            &channel,
            json!({ "room": "b", "user": "cy" }),
            JoinOptions::default(),
        )
        .await
        .unwrap();
    let refused = hub
        .join(
            "chat.room",
            &channel,
            json!({ "room": "a", "user": "mallory" }),
            JoinOptions::default(),
        )
        .await;
    assert!(matches!(refused, Err(JoinError::Refused(_))));

    ada.send(json!("hi")).await.unwrap();
    let said = message(json!({ "from": { "room": "a", "user": "ada" }, "said": "hi" }));
    assert_eq!(recv(&mut ada).await, said, "publish reaches the sender too");
    assert_eq!(recv(&mut bob).await, said);
    bob.send(json!("whoami")).await.unwrap();
    assert_eq!(
        recv(&mut bob).await,
        message(json!({ "you": { "room": "a", "user": "bob" } }))
    );
    cy.send(json!("alone")).await.unwrap();
    assert_eq!(
        recv(&mut cy).await,
        message(json!({ "from": { "room": "b", "user": "cy" }, "said": "alone" }))
    );

    ada.leave().await.unwrap();
    drop(bob);
    tokio::time::timeout(Duration::from_secs(5), async {
        while !log.lock().unwrap().contains(&"leave \"bob\"".to_owned()) {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("on_leave ran for a dropped member");
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log[..5],
        [
            "join \"ada\"",
            "join \"bob\"",
            "join \"cy\"",
            "message \"hi\"",
            "message \"whoami\"",
        ]
    );
    assert_eq!(log.iter().filter(|l| l.starts_with("leave")).count(), 2);
    drop(cy);
}

#[tokio::test]
async fn a_slow_member_is_closed_with_1013_and_the_others_go_on() {
    let channel = ChannelEndpoint::implement(ChannelHandler::push(|_| {
        futures_util::stream::iter(0..100)
            .then(|n| async move {
                tokio::time::sleep(Duration::from_millis(1)).await;
                Ok::<_, BoxError>(json!(n))
            })
            .chain(futures_util::stream::pending())
    }));
    let bus = LocalBus::new();
    let hub = Hub::new(bus.clone());
    let options = JoinOptions::default().buffer(8);
    let mut reader = hub
        .join("c", &channel, Value::Null, options.clone())
        .await
        .unwrap();
    let mut idle = hub.join("c", &channel, Value::Null, options).await.unwrap();
    let reading = tokio::spawn(async move {
        let mut got = Vec::new();
        for _ in 0..100 {
            got.push(recv(&mut reader).await);
        }
        (got, reader)
    });
    let (got, reader) = reading.await.unwrap();
    assert_eq!(got, (0..100).map(|n| message(json!(n))).collect::<Vec<_>>());
    // The idle member fell more than 8 behind: its next read closes it, and it leaves the topic.
    let Some(Outbound::Close { code, reason }) = recv(&mut idle).await else {
        panic!("closed")
    };
    assert_eq!(code, 1013);
    assert!(reason.contains("more than 8 messages"), "{reason}");
    assert_eq!(idle.recv().await, None);
    assert_eq!(
        (bus.topics(), bus.subscribers()),
        (1, 1),
        "the closed member left the topic; the reader still holds it"
    );
    drop(reader);
    drop(idle);
    assert_eq!(bus.topics(), 0);
}

/// A bus that records which method each message took: everywhere, or here only.
#[derive(Clone, Default)]
struct Recording {
    local: LocalBus,
    everywhere: Arc<Mutex<Vec<String>>>,
    here: Arc<Mutex<Vec<String>>>,
}

impl TopicBus for Recording {
    fn publish(&self, topic: &str, message: Outbound) {
        self.everywhere.lock().unwrap().push(topic.to_owned());
        self.local.publish(topic, message);
    }

    fn publish_here(&self, topic: &str, message: Outbound) {
        self.here.lock().unwrap().push(topic.to_owned());
        self.local.publish(topic, message);
    }

    fn subscribe(&self, topic: &str, since: Option<&Position>, buffer: usize) -> BusStream {
        self.local.subscribe(topic, since, buffer)
    }
}

#[tokio::test]
async fn a_push_channels_messages_stay_on_this_instance_and_published_ones_go_everywhere() {
    let starts = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(tokio::sync::Notify::new());
    let channel = counted_push(starts, release.clone());
    let bus = Recording::default();
    let hub = Hub::new(bus.clone());
    let mut member = hub
        .join(
            "chat.ticker",
            &channel,
            json!({ "room": "a" }),
            JoinOptions::default(),
        )
        .await
        .unwrap();
    let topic = Hub::channel_topic("chat.ticker", r#"{"room":"a"}"#);
    assert_eq!(
        recv(&mut member).await,
        message(json!({ "topic": "{\"room\":\"a\"}" }))
    );
    // From outside the handler, to the channel's subscribers on every instance.
    hub.publish(&topic, json!("from an HTTP handler"));
    assert_eq!(
        recv(&mut member).await,
        message(json!("from an HTTP handler"))
    );
    release.notify_one();
    assert_eq!(recv(&mut member).await, message(json!("released")));
    assert!(matches!(
        recv(&mut member).await,
        Some(Outbound::Close { code: 1000, .. })
    ));
    // Every instance with subscribers runs the push handler for them: its messages and its end
    // stay here; what the app publishes crosses.
    assert_eq!(
        *bus.here.lock().unwrap(),
        [topic.clone(), topic.clone(), topic.clone()]
    );
    assert_eq!(*bus.everywhere.lock().unwrap(), [topic]);
}

#[tokio::test]
async fn a_followed_topic_gives_its_messages_as_events_and_ends_on_a_loss() {
    let bus = LocalBus::new();
    let hub = Hub::new(bus.clone());
    let mut events = hub.follow("news", 4);
    hub.publish("news", json!({ "n": 1 }));
    let first = events.next().await.unwrap().unwrap();
    assert_eq!((first.data, first.id), (json!({ "n": 1 }), None));
    // The bus lost messages: the events end with MissedEvents, so a server cuts the response.
    bus.publish(
        "news",
        Outbound::Close {
            code: MISSED,
            reason: "the bus reconnected".to_owned(),
        },
    );
    let err = events.next().await.unwrap().unwrap_err();
    assert!(courier_core::MissedEvents::is(&*err), "{err}");
    assert!(err.to_string().contains("the bus reconnected"), "{err}");
    assert!(events.next().await.is_none());

    // Falling behind is a loss too.
    let mut slow = hub.follow("news", 2);
    for n in 0..5 {
        hub.publish("news", json!(n));
    }
    let err = loop {
        match slow.next().await.unwrap() {
            Ok(_) => continue,
            Err(err) => break err,
        }
    };
    assert!(err.to_string().contains("fell behind"), "{err}");

    // A topic closed with 1000 (a push channel that ended) just ends.
    let mut ending = hub.follow("news", 4);
    bus.publish(
        "news",
        Outbound::Close {
            code: 1000,
            reason: "the channel ended".to_owned(),
        },
    );
    assert!(ending.next().await.is_none());
}

/// Everything a subscription has ready now, without waiting.
fn ready(stream: &mut BusStream) -> Vec<Outbound> {
    let mut out = Vec::new();
    while let Some(Some(item)) = futures_util::FutureExt::now_or_never(stream.next()) {
        out.push(item.expect("not lagged"));
    }
    out
}

fn data_of(out: &[Outbound]) -> Vec<Value> {
    out.iter()
        .filter_map(|m| match m {
            Outbound::Message { data, .. } => Some(data.clone()),
            _ => None,
        })
        .collect()
}

fn start_of(out: &[Outbound]) -> Position {
    match out.first() {
        Some(Outbound::Start { at }) => at.clone(),
        other => panic!("no start first: {other:?}"),
    }
}

#[tokio::test]
async fn a_history_hands_a_returning_subscriber_what_it_missed_in_order_once() {
    let bus = LocalBus::with_history(History::new(100, Duration::from_secs(60)));
    // Published while nobody follows: kept all the same.
    for n in 1..=5 {
        bus.publish("news", Outbound::message(json!(n)));
    }
    let mut fresh = bus.subscribe("news", None, 16);
    let first = ready(&mut fresh);
    let latest = start_of(&first);
    assert_eq!(latest.offset(), 5);
    assert_eq!(
        first.len(),
        1,
        "a fresh subscriber is owed nothing before now"
    );

    let since = Position::new(latest.epoch(), 2).unwrap();
    let mut back = bus.subscribe("news", Some(&since), 16);
    bus.publish("news", Outbound::message(json!(6)));
    let out = ready(&mut back);
    assert_eq!(start_of(&out), since);
    assert_eq!(data_of(&out), [json!(3), json!(4), json!(5), json!(6)]);
    let offsets: Vec<u64> = out
        .iter()
        .filter_map(|m| match m {
            Outbound::Message { at: Some(at), .. } => Some(at.offset()),
            _ => None,
        })
        .collect();
    assert_eq!(offsets, [3, 4, 5, 6]);
    // The fresh subscriber gets the new one live, with its position.
    assert_eq!(
        ready(&mut fresh),
        [Outbound::Message {
            data: json!(6),
            at: Some(Position::new(latest.epoch(), 6).unwrap())
        }]
    );
    // From the latest position: nothing missed, nothing repeated.
    let now = Position::new(latest.epoch(), 6).unwrap();
    let mut current = bus.subscribe("news", Some(&now), 16);
    assert_eq!(ready(&mut current), [Outbound::Start { at: now }]);
    // A push channel's messages (this instance's own) go to subscribers, not into the history.
    bus.publish_here("news", Outbound::message(json!("here")));
    assert_eq!(ready(&mut current), [Outbound::message(json!("here"))]);
    let mut after = bus.subscribe("news", None, 16);
    assert_eq!(start_of(&ready(&mut after)).offset(), 6);
}

#[tokio::test]
async fn a_position_the_history_cannot_honour_is_a_gap_told() {
    let bus = LocalBus::with_history(History::new(3, Duration::from_secs(60)));
    for n in 1..=10 {
        bus.publish("news", Outbound::message(json!(n)));
    }
    let latest = start_of(&ready(&mut bus.subscribe("news", None, 16)));
    let epoch = latest.epoch().to_owned();
    let gap = |since: Position| {
        let mut stream = bus.subscribe("news", Some(&since), 16);
        match ready(&mut stream).first() {
            Some(Outbound::Close { code, reason }) => {
                assert_eq!(*code, MISSED);
                assert!(reason.starts_with(MISSED_REASON), "{reason}");
                reason.clone()
            }
            other => panic!("{since}: not a gap: {other:?}"),
        }
    };
    // Kept: 8, 9, 10. From 7 everything is there; from 6, 7 is gone.
    let from_7 = ready(&mut bus.subscribe("news", Some(&Position::new(&epoch, 7).unwrap()), 16));
    assert_eq!(data_of(&from_7), [json!(8), json!(9), json!(10)]);
    assert!(gap(Position::new(&epoch, 6).unwrap()).contains("no longer holds"));
    assert!(gap(Position::new(&epoch, 11).unwrap()).contains("past the topic's latest"));
    assert!(gap(Position::new("another", 9).unwrap()).contains("begun again"));
    // A bus without a history honours no position.
    let plain = LocalBus::new();
    let mut stream = plain.subscribe("news", Some(&latest), 16);
    assert!(matches!(
        ready(&mut stream).first(),
        Some(Outbound::Close { code: MISSED, .. })
    ));
    // Positions read from a client are checked.
    for bad in [
        "",
        "e",
        ":1",
        "e:",
        "e:-1",
        "e:+1",
        "e:1x",
        "é:1",
        &format!("{}:1", "e".repeat(65)),
    ] {
        assert!(bad.parse::<Position>().is_err(), "{bad:?}");
    }
    assert_eq!(
        "a-b_C:18446744073709551615"
            .parse::<Position>()
            .unwrap()
            .offset(),
        u64::MAX
    );
}

#[tokio::test]
async fn a_history_forgets_what_is_past_its_age_and_unused_topics_go() {
    let bus = LocalBus::with_history(History::new(100, Duration::from_millis(50)));
    bus.publish("old", Outbound::message(json!(1)));
    let latest = start_of(&ready(&mut bus.subscribe("old", None, 16)));
    tokio::time::sleep(Duration::from_millis(80)).await;
    let since = Position::new(latest.epoch(), 0).unwrap();
    let mut stream = bus.subscribe("old", Some(&since), 16);
    assert!(matches!(
        ready(&mut stream).first(),
        Some(Outbound::Close { code: MISSED, .. })
    ));
    drop(stream);
    // Topics nobody follows whose history aged out are swept as the bus is used.
    for n in 0..2_000 {
        bus.publish(&format!("topic-{n}"), Outbound::message(json!(n)));
    }
    let held = bus.held();
    assert!(held <= 2_001, "{held}");
    tokio::time::sleep(Duration::from_millis(80)).await;
    for n in 0..2_100 {
        bus.publish("busy", Outbound::message(json!(n)));
    }
    assert!(bus.held() < 10, "{} topics held", bus.held());
    assert_eq!(bus.topics(), 0);
}

#[tokio::test]
async fn a_member_that_comes_back_with_its_position_gets_what_it_missed() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let channel = chat(log.clone());
    let bus = LocalBus::with_history(History::new(500, Duration::from_secs(60)));
    let hub = Hub::new(bus.clone());
    let join = |user: &str, since: Option<Position>| {
        let mut options = JoinOptions::default();
        if let Some(since) = since {
            options = options.since(since);
        }
        hub.join(
            "chat",
            &channel,
            json!({ "room": "r", "user": user }),
            options,
        )
    };
    let mut ada = join("ada", None).await.unwrap();
    let start = match recv(&mut ada).await {
        Some(Outbound::Start { at }) => at,
        other => panic!("{other:?}"),
    };
    assert_eq!(start.offset(), 0);
    let bob = join("bob", None).await.unwrap();
    bob.send(json!("one")).await.unwrap();
    let at = match recv(&mut ada).await {
        Some(Outbound::Message { at: Some(at), .. }) => at,
        other => panic!("{other:?}"),
    };
    assert_eq!((at.epoch(), at.offset()), (start.epoch(), 1));
    drop(ada);
    // 200 messages while ada is away, published by a member and from outside.
    for n in 0..200 {
        if n % 2 == 0 {
            bob.send(json!(n)).await.unwrap();
        } else {
            hub.publish(&Hub::channel_topic("chat", "{\"room\":\"r\"}"), json!(n));
        }
    }
    let mut ada = join("ada", Some(at.clone())).await.unwrap();
    assert_eq!(recv(&mut ada).await, Some(Outbound::Start { at }));
    let mut got = Vec::new();
    while got.len() < 200 {
        match recv(&mut ada).await {
            Some(Outbound::Message { data, .. }) => {
                got.push(data.get("said").cloned().unwrap_or(data))
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(got, (0..200).map(|n| json!(n)).collect::<Vec<_>>());
    // A position the history no longer holds refuses the join before `on_join` runs for it.
    let joins_before = log.lock().unwrap().len();
    let stale = Position::new("lost", 3).unwrap();
    match join("ada", Some(stale)).await {
        Err(JoinError::Missed(reason)) => assert!(reason.starts_with(MISSED_REASON), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(log.lock().unwrap().len(), joins_before);
}

#[tokio::test]
async fn a_followed_topic_resumes_from_its_last_event_id_and_tells_a_gap_once() {
    let hub = Hub::new(LocalBus::with_history(History::new(
        3,
        Duration::from_secs(60),
    )));
    let mut events = hub.follow("news", 16);
    hub.publish("news", json!(1));
    let first = events.next().await.unwrap().unwrap();
    let id = first.id.clone().expect("an id with a history");
    drop(events);
    hub.publish("news", json!(2));
    hub.publish("news", json!(3));
    let mut resumed = hub.follow_from("news", Some(&id), 16);
    let data: Vec<Value> = vec![
        resumed.next().await.unwrap().unwrap().data,
        resumed.next().await.unwrap().unwrap().data,
    ];
    assert_eq!(data, [json!(2), json!(3)]);
    // Gone from the history (count 3): the stream begins from now, the gap told first.
    for n in 4..=10 {
        hub.publish("news", json!(n));
    }
    for (stale, latest) in [(id.as_str(), ":10"), ("not a position", ":11")] {
        let mut late = hub.follow_from("news", Some(stale), 16);
        let gap = late.next().await.unwrap().unwrap();
        assert_eq!(gap.event.as_deref(), Some(GAP_EVENT));
        assert!(
            gap.data["reason"]
                .as_str()
                .unwrap()
                .starts_with(MISSED_REASON),
            "{gap:?}"
        );
        assert!(gap.id.as_deref().unwrap().ends_with(latest), "{gap:?}");
        hub.publish("news", json!("live"));
        assert_eq!(late.next().await.unwrap().unwrap().data, json!("live"));
    }
}

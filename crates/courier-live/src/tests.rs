use super::*;
use courier_core::BoxError;
use courier_core::{ChannelEndpoint, ChannelHandler, ChannelHandlers, Peer, PeerHandler};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn message(data: Value) -> Option<Outbound> {
    Some(Outbound::Message { data })
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
    assert!(a2_seen.contains(&Outbound::Message {
        data: json!("released")
    }));
    assert!(matches!(
        a2_seen.last(),
        Some(Outbound::Close { code: 1000, .. })
    ));
    assert!(a2_seen.iter().all(
        |m| !matches!(m, Outbound::Message { data } if data.to_string().contains("\\\"b\\\""))
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

    fn subscribe(&self, topic: &str, buffer: usize) -> BusStream {
        self.local.subscribe(topic, buffer)
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

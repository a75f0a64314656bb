//! The bus's two tasks: one publishes and keeps the subscriptions, one hands what Redis sends
//! to this instance's subscribers. Both hold the bus weakly and end when it is dropped.

use crate::envelope::Envelope;
use crate::handed;
use crate::shared::{Publish, Shared};
use courier_live::TopicBus;
use redis::aio::{AsyncPushSender, ConnectionManager, SendError};
use redis::{PushInfo, PushKind, Value};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::mpsc;

/// How many queued messages go to Redis in one round trip, in order.
const BATCH: usize = 64;

/// How often the publishing task looks at the subscriptions unasked (to retry one that failed)
/// and, while the connection is down, pings Redis so that it is reconnected to.
const TICK: Duration = Duration::from_secs(1);

/// Publishes what the bus queues, in order, a batch per round trip; takes and drops the Redis
/// subscriptions as topics gain their first local subscriber and lose their last; tells the
/// other instances of the gaps of topics whose messages did not go out.
pub(crate) async fn publish_and_subscribe(
    mut connection: ConnectionManager,
    mut publishes: mpsc::Receiver<Publish>,
    mut woken: mpsc::Receiver<()>,
    bus: Weak<Shared>,
) {
    let mut subscribed: HashSet<String> = HashSet::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let mut batch = Vec::new();
        tokio::select! {
            biased;
            woken = woken.recv() => if woken.is_none() { return },
            job = publishes.recv() => match job {
                Some(job) => batch.push(job),
                None => return,
            },
            _ = tick.tick() => {}
        }
        let Some(shared) = bus.upgrade() else {
            return;
        };
        if batch.is_empty() {
            if !shared.connected.load(std::sync::atomic::Ordering::Relaxed) {
                // A command is what has the connection manager try again.
                let _ = redis::cmd("PING")
                    .query_async::<String>(&mut connection)
                    .await;
            }
            keep_subscriptions(&mut connection, &shared, &mut subscribed).await;
            tell_gaps(&mut connection, &shared).await;
            continue;
        }
        while batch.len() < BATCH {
            match publishes.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        tell_gaps(&mut connection, &shared).await;
        publish(&mut connection, &shared, batch).await;
    }
}

/// Sends `batch` in order, a round trip per run of messages of one kind (into the history, or
/// only on the channel); a topic whose message did not go out is marked for a gap.
async fn publish(connection: &mut ConnectionManager, shared: &Shared, batch: Vec<Publish>) {
    let mut rest = &batch[..];
    while let Some(first) = rest.first() {
        let run = rest
            .iter()
            .take_while(|job| job.record == first.record)
            .count();
        let (jobs, after) = rest.split_at(run);
        rest = after;
        let sent = match (&shared.history, first.record) {
            (Some(scripts), true) => {
                let envelopes: Vec<(&str, &[u8])> = jobs
                    .iter()
                    .map(|job| (job.topic.as_str(), job.payload.as_slice()))
                    .collect();
                scripts.append(connection, &shared.prefix, &envelopes).await
            }
            _ => {
                let mut pipe = redis::pipe();
                for job in jobs {
                    pipe.publish(shared.channel(&job.topic), &job.payload)
                        .ignore();
                }
                pipe.query_async::<()>(connection).await
            }
        };
        if let Err(e) = sent {
            let mut missed = shared.missed();
            for job in jobs {
                if missed.insert(job.topic.clone()) {
                    tracing::warn!(error = %e, "redis bus: publishing failed; the topic's subscribers will be told of the gap");
                }
            }
        }
    }
}

/// Tells the other instances (with a history, every instance, through a gap entry of the
/// topic's history) that the marked topics lost messages, before anything else goes out on
/// them.
async fn tell_gaps(connection: &mut ConnectionManager, shared: &Shared) {
    let topics: Vec<String> = shared.missed().drain().collect();
    if topics.is_empty() {
        return;
    }
    let gap = Envelope::gap(&shared.instance).to_bytes();
    let told = match &shared.history {
        Some(scripts) => {
            let envelopes: Vec<(&str, &[u8])> = topics
                .iter()
                .map(|topic| (topic.as_str(), gap.as_slice()))
                .collect();
            scripts.append(connection, &shared.prefix, &envelopes).await
        }
        None => {
            let mut pipe = redis::pipe();
            for topic in &topics {
                pipe.publish(shared.channel(topic), &gap).ignore();
            }
            pipe.query_async::<()>(connection).await
        }
    };
    if told.is_err() {
        shared.missed().extend(topics);
    }
}

/// Subscribes to the topics that gained a local subscriber, unsubscribes from those that lost
/// their last; one that fails is tried again on the next round.
async fn keep_subscriptions(
    connection: &mut ConnectionManager,
    shared: &Shared,
    subscribed: &mut HashSet<String>,
) {
    let wanted: HashSet<String> = shared.wanted().keys().cloned().collect();
    for topic in wanted.difference(subscribed).cloned().collect::<Vec<_>>() {
        match connection.subscribe(shared.channel(&topic)).await {
            Ok(()) => {
                subscribed.insert(topic);
            }
            Err(e) => {
                tracing::debug!(topic, error = %e, "redis bus: subscribing failed; trying again");
                break;
            }
        }
    }
    for topic in subscribed.difference(&wanted).cloned().collect::<Vec<_>>() {
        if connection.unsubscribe(shared.channel(&topic)).await.is_ok() {
            subscribed.remove(&topic);
        }
    }
    shared
        .subscribed
        .store(subscribed.len(), std::sync::atomic::Ordering::Relaxed);
}

/// Where redis-rs hands what Redis pushes: messages in a bounded queue (one that finds it full
/// is dropped, and its topic's subscribers told), subscription changes and disconnections —
/// one per topic change — in their own.
#[derive(Clone)]
pub(crate) struct Inbox {
    messages: mpsc::Sender<PushInfo>,
    control: mpsc::UnboundedSender<PushInfo>,
    /// The Redis channels of messages dropped for want of room.
    overflow: Arc<Mutex<HashSet<Vec<u8>>>>,
}

/// The receiving ends of an [`Inbox`].
pub(crate) struct Received {
    messages: mpsc::Receiver<PushInfo>,
    control: mpsc::UnboundedReceiver<PushInfo>,
    overflow: Arc<Mutex<HashSet<Vec<u8>>>>,
}

impl Inbox {
    pub(crate) fn new(queue: usize) -> (Self, Received) {
        let (messages, message_queue) = mpsc::channel(queue);
        let (control, control_queue) = mpsc::unbounded_channel();
        let overflow = Arc::new(Mutex::new(HashSet::new()));
        let inbox = Self {
            messages,
            control,
            overflow: Arc::clone(&overflow),
        };
        let received = Received {
            messages: message_queue,
            control: control_queue,
            overflow,
        };
        (inbox, received)
    }
}

impl AsyncPushSender for Inbox {
    fn send(&self, info: PushInfo) -> Result<(), SendError> {
        if info.kind != PushKind::Message {
            return self.control.send(info).map_err(|_| SendError);
        }
        match self.messages.try_send(info) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(info)) => {
                if let Some(channel) = bytes_at(&info, 0) {
                    let mut overflow = self.overflow.lock().unwrap_or_else(|e| e.into_inner());
                    overflow.insert(channel.to_vec());
                }
                Ok(())
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Err(SendError),
        }
    }
}

/// Hands what Redis sends to this instance's subscribers: other instances' messages (its own
/// skipped), their gaps, and after a reconnection a gap on every topic it had to subscribe to
/// again. With a history, every message with its position, its own included, in offset order,
/// what was skipped fetched from the history first ([`handed`]).
pub(crate) async fn hand_on(mut received: Received, bus: Weak<Shared>) {
    // Without a history, topics that were subscribed when the connection dropped: their
    // subscribers are told once Redis has them subscribed again.
    let mut reconnecting: HashSet<String> = HashSet::new();
    loop {
        let push = tokio::select! {
            biased;
            Some(push) = received.control.recv() => push,
            Some(push) = received.messages.recv() => push,
            else => return,
        };
        let Some(shared) = bus.upgrade() else {
            return;
        };
        let overflowed: Vec<Vec<u8>> = {
            let mut overflow = received.overflow.lock().unwrap_or_else(|e| e.into_inner());
            overflow.drain().collect()
        };
        for channel in overflowed {
            let Some(topic) = topic_of(&shared, &channel) else {
                continue;
            };
            let last = shared.handed().get(topic).cloned();
            match (&shared.history, last) {
                (Some(scripts), Some(last)) => {
                    handed::catch_up(&shared, scripts, topic, &last, None).await;
                }
                _ => shared.tell_gap(topic, "this instance fell behind the topic bus"),
            }
        }
        let topic = bytes_at(&push, 0).and_then(|channel| topic_of(&shared, channel));
        match (&push.kind, topic) {
            (PushKind::Message, Some(topic)) => {
                let Some(payload) = bytes_at(&push, 1) else {
                    continue;
                };
                match (Envelope::read(payload), &shared.history) {
                    (Some(envelope), Some(scripts)) if envelope.at.is_some() => {
                        handed::positioned(&shared, scripts, topic, envelope).await;
                    }
                    (Some(envelope), _) if envelope.from == shared.instance => {}
                    (Some(envelope), _) => match envelope.into_message() {
                        Some(message) => shared.local.publish(topic, message),
                        None => shared.tell_gap(topic, "another instance could not publish to it"),
                    },
                    (None, _) => tracing::warn!(
                        topic,
                        "redis bus: a payload that is not courier's on its channel; ignored"
                    ),
                }
            }
            (PushKind::Disconnection, _) => {
                shared
                    .connected
                    .store(false, std::sync::atomic::Ordering::Relaxed);
                if shared.history.is_none() {
                    reconnecting.extend(shared.wanted().keys().cloned());
                }
                tracing::warn!("redis bus: the connection to Redis dropped; reconnecting");
                shared.wake();
            }
            (PushKind::Subscribe, topic) => {
                shared
                    .connected
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                let Some(topic) = topic else {
                    continue;
                };
                match &shared.history {
                    Some(scripts) => handed::subscribed(&shared, scripts, topic).await,
                    None => {
                        if reconnecting.remove(topic) {
                            shared.tell_gap(topic, "the topic bus reconnected to Redis");
                        }
                    }
                }
            }
            (PushKind::Unsubscribe, Some(topic)) => {
                reconnecting.remove(topic);
                handed::unsubscribed(&shared, topic);
            }
            _ => {}
        }
    }
}

/// The bytes of the `index`th item of a push.
fn bytes_at(push: &PushInfo, index: usize) -> Option<&[u8]> {
    match push.data.get(index)? {
        Value::BulkString(bytes) => Some(bytes),
        Value::SimpleString(text) => Some(text.as_bytes()),
        _ => None,
    }
}

/// The topic of a Redis channel of this bus.
fn topic_of<'a>(shared: &Shared, channel: &'a [u8]) -> Option<&'a str> {
    std::str::from_utf8(channel)
        .ok()?
        .strip_prefix(shared.prefix.as_str())
}

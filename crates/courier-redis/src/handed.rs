//! With a history: what this instance hands its subscribers of each topic comes in offset
//! order, each message once, and what the channel skipped (a message pub/sub lost, a full
//! inbox, a reconnection) is fetched from the topic's history first — or, when the history no
//! longer holds it, the subscribers are told of the gap.

use crate::envelope::Envelope;
use crate::history::Scripts;
use crate::shared::Shared;
use courier_live::{Position, TopicBus};
use std::sync::atomic::Ordering;

/// A message (or a gap) with its position, from the topic's channel.
pub(crate) async fn positioned(
    shared: &Shared,
    scripts: &Scripts,
    topic: &str,
    envelope: Envelope,
) {
    let Some(at) = envelope.at.clone() else {
        return;
    };
    let last = shared.handed().get(topic).cloned();
    match last {
        Some(last) if last.epoch() == at.epoch() && at.offset() <= last.offset() => {}
        Some(last)
            if last.epoch() == at.epoch() && last.offset().checked_add(1) == Some(at.offset()) =>
        {
            hand(shared, topic, envelope, at);
        }
        // Messages were skipped, or the history was begun again: its stream tells which.
        Some(last) => catch_up(shared, scripts, topic, &last, Some(at)).await,
        // No position read yet (reading it failed): this one begins the topic here.
        None => hand(shared, topic, envelope, at),
    }
}

/// Hands one message on, or tells of a gap marker, and keeps its position.
fn hand(shared: &Shared, topic: &str, envelope: Envelope, at: Position) {
    if envelope.gap {
        shared.tell_gap(
            topic,
            &format!("a publisher lost messages of the topic before {at}"),
        );
    } else if let Some(message) = envelope.into_message() {
        shared.local.publish(topic, message);
    }
    keep(shared, topic, at);
}

/// The topic's Redis subscription was taken, or taken again after a reconnection: from the
/// position last handed on, what was missed meanwhile is handed on (or the gap told); a topic
/// new here begins at its latest position.
pub(crate) async fn subscribed(shared: &Shared, scripts: &Scripts, topic: &str) {
    if !shared.wanted().contains_key(topic) {
        return;
    }
    let last = shared.handed().get(topic).cloned();
    match last {
        Some(last) => catch_up(shared, scripts, topic, &last, None).await,
        None => {
            let read = scripts
                .read(&mut shared.connection.clone(), &shared.prefix, topic, None)
                .await;
            match read {
                Ok(snapshot) => keep(shared, topic, snapshot.latest),
                Err(why) => tracing::warn!(
                    topic,
                    why,
                    "redis bus: the topic's latest position could not be read; its subscribers wait"
                ),
            }
        }
    }
}

/// The topic's Redis subscription was dropped: unless it is wanted again (and will be taken
/// again, and caught up), its position is forgotten.
pub(crate) fn unsubscribed(shared: &Shared, topic: &str) {
    if !shared.wanted().contains_key(topic) {
        shared.handed().remove(topic);
    }
}

/// Hands on what the history holds after `last`, or tells the gap when it does not hold all of
/// it. `seen` is the message that showed the skip, if one did.
pub(crate) async fn catch_up(
    shared: &Shared,
    scripts: &Scripts,
    topic: &str,
    last: &Position,
    seen: Option<Position>,
) {
    let read = scripts
        .read(
            &mut shared.connection.clone(),
            &shared.prefix,
            topic,
            Some(last),
        )
        .await;
    let snapshot = match read {
        Ok(snapshot) => snapshot,
        Err(why) => {
            shared.tell_gap(
                topic,
                &format!("the topic bus could not read the topic's history: {why}"),
            );
            match seen {
                Some(seen) => keep(shared, topic, seen),
                None => {
                    shared.handed().remove(topic);
                }
            }
            return;
        }
    };
    match snapshot.after(last, scripts.history()) {
        Ok(messages) => {
            shared
                .recovered
                .fetch_add(messages.len() as u64, Ordering::Relaxed);
            for message in messages {
                shared.local.publish(topic, message);
            }
        }
        Err(why) => shared.tell_gap(topic, &why),
    }
    // Whatever comes on the channel up to here was handed on, or is part of the gap told.
    keep(shared, topic, snapshot.latest);
}

/// Keeps `at` as the last position handed on for `topic`, while it is wanted; wakes the
/// subscriptions waiting for the topic to be ready.
fn keep(shared: &Shared, topic: &str, at: Position) {
    if !shared.wanted().contains_key(topic) {
        shared.handed().remove(topic);
        return;
    }
    let new = shared.handed().insert(topic.to_owned(), at).is_none();
    if new {
        shared.ready.send_modify(|n| *n = n.wrapping_add(1));
    }
}

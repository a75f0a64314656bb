//! One local subscription of a [`RedisBus`](crate::RedisBus): the topic's Redis subscription
//! held while it lives and, with a history, where it begins — read from Redis once the topic is
//! subscribed there — and what it recovers.

use crate::shared::Shared;
use courier_live::{BusStream, Lagged, Outbound, Position};
use futures_util::{Stream, StreamExt};
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

/// How long a subscription with a history waits for Redis (its topic subscribed there, its
/// history read) before its first item says it cannot reach it.
const FIRST_WITHIN: Duration = Duration::from_secs(4);

/// A subscription with a history: [`Outbound::Start`], the messages after `since` the history
/// holds, then `live` from the last of them on (what it had before is skipped, so each comes
/// once); or, when `since` cannot be honoured or Redis not reached in time, the gap.
pub(crate) fn recovering(
    shared: &Arc<Shared>,
    topic: &str,
    since: Option<Position>,
    live: BusStream,
) -> BusStream {
    let shared = Arc::downgrade(shared);
    let topic = topic.to_owned();
    let opened = async move {
        let begun = tokio::time::timeout(FIRST_WITHIN, begin(&shared, &topic, since)).await;
        match begun {
            Ok(Ok((start, recovered, last))) => {
                let first = std::iter::once(start).chain(recovered).map(Ok);
                let live = live.filter(move |item| {
                    let had = matches!(
                        item,
                        Ok(Outbound::Message { at: Some(at), .. })
                            if at.epoch() == last.epoch() && at.offset() <= last.offset()
                    );
                    std::future::ready(!had)
                });
                Box::pin(futures_util::stream::iter(first).chain(live)) as BusStream
            }
            Ok(Err(why)) => Box::pin(futures_util::stream::iter([Ok(Outbound::missed(why))])),
            Err(_) => Box::pin(futures_util::stream::iter([Ok(Outbound::missed(
                "the topic bus cannot reach Redis",
            ))])),
        }
    };
    Box::pin(futures_util::stream::once(opened).flatten())
}

/// Where a subscription with a history begins: its [`Outbound::Start`], the messages it
/// recovers, and the last position they reach (the live messages up to it are skipped).
async fn begin(
    shared: &Weak<Shared>,
    topic: &str,
    since: Option<Position>,
) -> Result<(Outbound, Vec<Outbound>, Position), String> {
    let gone = || "the topic bus was shut down".to_owned();
    let shared = shared.upgrade().ok_or_else(gone)?;
    let scripts = shared.history.as_ref().ok_or_else(gone)?;
    // Once the topic is subscribed on Redis, every message after the position read below
    // reaches this instance.
    let mut ready = shared.ready.subscribe();
    while !shared.handed().contains_key(topic) {
        ready.changed().await.map_err(|_| gone())?;
    }
    let mut connection = shared.connection.clone();
    let snapshot = scripts
        .read(&mut connection, &shared.prefix, topic, since.as_ref())
        .await
        .map_err(|why| format!("the topic bus cannot read the topic's history: {why}"))?;
    let latest = snapshot.latest.clone();
    match since {
        None => Ok((Outbound::Start { at: latest.clone() }, Vec::new(), latest)),
        Some(since) => {
            let recovered = snapshot.after(&since, scripts.history())?;
            Ok((Outbound::Start { at: since }, recovered, latest))
        }
    }
}

/// One local subscription; the topic's Redis subscription is dropped with its last.
pub(crate) struct Held {
    stream: BusStream,
    topic: String,
    shared: Weak<Shared>,
}

impl Held {
    pub(crate) fn new(stream: BusStream, topic: &str, shared: &Arc<Shared>) -> Self {
        Self {
            stream,
            topic: topic.to_owned(),
            shared: Arc::downgrade(shared),
        }
    }
}

impl Stream for Held {
    type Item = Result<Outbound, Lagged>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.stream.as_mut().poll_next(cx)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let last = {
            let mut wanted = shared.wanted();
            match wanted.get_mut(&self.topic) {
                Some(count) if *count > 1 => {
                    *count -= 1;
                    false
                }
                Some(_) => {
                    wanted.remove(&self.topic);
                    true
                }
                None => false,
            }
        };
        if last {
            shared.wake();
        }
    }
}

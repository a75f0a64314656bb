//! A topic's history in Redis: a stream of its messages and a hash of its epoch and latest
//! offset, written and read by two Lua scripts so that each step is atomic, and the recovery of
//! the messages after a position from what they read.

use crate::envelope::Envelope;
use courier_live::{fresh_epoch, History, Outbound, Position};
use redis::aio::ConnectionManager;
use redis::{ErrorKind, RedisResult, ServerErrorKind, Value};
use std::sync::Mutex;
use std::time::Duration;

/// Appends one envelope (a message or a gap) to a topic's history and publishes it, with its
/// position in front, on the topic's channel.
///
/// KEYS: the meta hash, the stream. ARGV: a fresh epoch (taken only when the meta hash is
/// new), the envelope, the history's count, the stream's time to live (ms), the meta hash's
/// (ms), the channel. A new meta hash means a new history: a stream left from an old one (the
/// hash evicted) is dropped, so offsets start again at 1.
const APPEND: &str = r#"
if redis.call('HSETNX', KEYS[1], 'e', ARGV[1]) == 1 then
  redis.call('DEL', KEYS[2])
end
local epoch = redis.call('HGET', KEYS[1], 'e')
local offset = redis.call('HINCRBY', KEYS[1], 's', 1)
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], string.format('%d-0', offset),
  'd', ARGV[2], 't', string.format('%d', ms))
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PUBLISH', ARGV[6],
  '{"at":"' .. epoch .. ':' .. string.format('%d', offset) .. '",' .. string.sub(ARGV[2], 2))
return offset
"#;

/// Reads a topic's epoch and latest offset, Redis's time, and the stream's entries from an id
/// on, in one step; begins the history (its epoch) when there is none, so that the epoch read
/// is the one the next message will have.
///
/// KEYS: the meta hash, the stream. ARGV: a fresh epoch, the meta hash's time to live (ms), the
/// first stream id to read (empty: none).
const READ: &str = r#"
if redis.call('HSETNX', KEYS[1], 'e', ARGV[1]) == 1 then
  redis.call('DEL', KEYS[2])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local meta = redis.call('HMGET', KEYS[1], 'e', 's')
local now = redis.call('TIME')
local entries = {}
if ARGV[3] ~= '' then
  entries = redis.call('XRANGE', KEYS[2], ARGV[3], '+')
end
return {meta[1], meta[2] or '0', now[1], now[2], entries}
"#;

/// The meta hash outlives the stream by this much at least: a topic quiet for longer begins a
/// new epoch.
const META_AT_LEAST: Duration = Duration::from_secs(24 * 60 * 60);

/// The Redis names of one topic.
pub(crate) struct Keys {
    /// The pub/sub channel: the prefix, then the topic.
    pub(crate) channel: String,
    /// The stream of its history: the prefix, `h:`, the topic.
    stream: String,
    /// The hash of its epoch (`e`) and latest offset (`s`): the prefix, `m:`, the topic.
    meta: String,
}

impl Keys {
    pub(crate) fn new(prefix: &str, topic: &str) -> Self {
        Self {
            channel: format!("{prefix}{topic}"),
            stream: format!("{prefix}h:{topic}"),
            meta: format!("{prefix}m:{topic}"),
        }
    }
}

/// The two scripts, loaded once and run by their SHA1 (`EVALSHA`), loaded again when Redis
/// has forgotten them (it restarted).
pub(crate) struct Scripts {
    history: History,
    append: Lua,
    read: Lua,
}

impl Scripts {
    pub(crate) fn new(history: History) -> Self {
        Self {
            history,
            append: Lua::new(APPEND),
            read: Lua::new(READ),
        }
    }

    pub(crate) fn history(&self) -> History {
        self.history
    }

    /// Milliseconds the stream lives after its last message: the history's age.
    fn stream_ttl(&self) -> u128 {
        self.history.age().as_millis().max(1)
    }

    /// Milliseconds the meta hash lives after its last use: the age, at least 24 h.
    fn meta_ttl(&self) -> u128 {
        self.history.age().max(META_AT_LEAST).as_millis()
    }

    /// Appends each `(topic, envelope)` in turn, one round trip.
    pub(crate) async fn append(
        &self,
        connection: &mut ConnectionManager,
        prefix: &str,
        envelopes: &[(&str, &[u8])],
    ) -> RedisResult<()> {
        // The script's SHA1 is asked of Redis the first time; after a restart Redis has
        // forgotten the script (NOSCRIPT), and it is loaded again: nothing ran.
        for tries_left in [true, false] {
            let sha = self.append.sha(connection).await?;
            let mut pipe = redis::pipe();
            for (topic, envelope) in envelopes {
                let keys = Keys::new(prefix, topic);
                pipe.add_command(
                    redis::cmd("EVALSHA")
                        .arg(&sha)
                        .arg(2)
                        .arg(&keys.meta)
                        .arg(&keys.stream)
                        .arg(fresh_epoch())
                        .arg(*envelope)
                        .arg(self.history.count())
                        .arg(self.stream_ttl().to_string())
                        .arg(self.meta_ttl().to_string())
                        .arg(&keys.channel)
                        .clone(),
                )
                .ignore();
            }
            match pipe.query_async::<()>(connection).await {
                Err(e) if tries_left && no_script(&e) => self.append.forget(),
                done => return done,
            }
        }
        Ok(())
    }

    /// Reads `topic`'s history after `after` (its epoch and latest offset only, without).
    pub(crate) async fn read(
        &self,
        connection: &mut ConnectionManager,
        prefix: &str,
        topic: &str,
        after: Option<&Position>,
    ) -> Result<Snapshot, String> {
        let keys = Keys::new(prefix, topic);
        let from = after.map_or_else(String::new, |at| {
            format!("{}-0", at.offset().saturating_add(1))
        });
        let mut reply = Err(String::new());
        for tries_left in [true, false] {
            let sha = self.read.sha(connection).await.map_err(|e| e.to_string())?;
            let done = redis::cmd("EVALSHA")
                .arg(&sha)
                .arg(2)
                .arg(&keys.meta)
                .arg(&keys.stream)
                .arg(fresh_epoch())
                .arg(self.meta_ttl().to_string())
                .arg(&from)
                .query_async::<Value>(connection)
                .await;
            match done {
                Err(e) if tries_left && no_script(&e) => self.read.forget(),
                done => {
                    reply = done.map_err(|e| e.to_string());
                    break;
                }
            }
        }
        Snapshot::parse(reply?)
            .ok_or_else(|| format!("the history of `{topic}` in Redis is not courier's"))
    }
}

fn no_script(e: &redis::RedisError) -> bool {
    e.kind() == ErrorKind::Server(ServerErrorKind::NoScript)
}

/// A Lua script and its SHA1 once Redis has told it.
struct Lua {
    text: &'static str,
    sha: Mutex<Option<String>>,
}

impl Lua {
    fn new(text: &'static str) -> Self {
        Self {
            text,
            sha: Mutex::new(None),
        }
    }

    async fn sha(&self, connection: &mut ConnectionManager) -> RedisResult<String> {
        if let Some(sha) = self.lock().clone() {
            return Ok(sha);
        }
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(self.text)
            .query_async(connection)
            .await?;
        *self.lock() = Some(sha.clone());
        Ok(sha)
    }

    fn forget(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.sha.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What the read script saw: the topic's latest position, Redis's clock, and the entries read.
#[derive(Debug)]
pub(crate) struct Snapshot {
    pub(crate) latest: Position,
    now_ms: u64,
    entries: Vec<Entry>,
}

/// One entry of a topic's stream.
#[derive(Debug)]
struct Entry {
    offset: u64,
    /// When it was added, by Redis's clock.
    ms: u64,
    /// `None` for one that is not courier's.
    envelope: Option<Envelope>,
}

impl Snapshot {
    /// Reads the script's reply; `None` when it is not what the script returns (the keys hold
    /// something else).
    fn parse(reply: Value) -> Option<Self> {
        let Value::Array(items) = reply else {
            return None;
        };
        let [epoch, offset, seconds, micros, entries] = <[Value; 5]>::try_from(items).ok()?;
        let latest = Position::new(&text(&epoch)?, number(&offset)?).ok()?;
        let now_ms = number(&seconds)?
            .checked_mul(1000)?
            .checked_add(number(&micros)? / 1000)?;
        let Value::Array(entries) = entries else {
            return None;
        };
        let entries = entries
            .into_iter()
            .map(Entry::parse)
            .collect::<Option<Vec<_>>>()?;
        Some(Self {
            latest,
            now_ms,
            entries,
        })
    }

    /// The messages after `since`, each with its position, when the history holds every one of
    /// them (at most `history`'s count, none older than its age, none a gap); else why not.
    pub(crate) fn after(
        &self,
        since: &Position,
        history: History,
    ) -> Result<Vec<Outbound>, String> {
        let latest = &self.latest;
        // The stream is trimmed to about the count (`MAXLEN ~`): past it exactly, as a
        // history in process, the messages are gone.
        since.owed(latest, history.count() as u64)?;
        let gone = || {
            format!(
                "the history no longer holds {}:{}",
                since.epoch(),
                since.offset().saturating_add(1)
            )
        };
        let oldest_ms = self
            .now_ms
            .saturating_sub(u64::try_from(history.age().as_millis()).unwrap_or(u64::MAX));
        let mut next = since.offset().saturating_add(1);
        let mut messages = Vec::new();
        for entry in self
            .entries
            .iter()
            .filter(|e| e.offset > since.offset() && e.offset <= latest.offset())
        {
            if entry.offset != next || entry.ms < oldest_ms {
                return Err(gone());
            }
            next = next.saturating_add(1);
            let at = Position::new(latest.epoch(), entry.offset).map_err(|_| gone())?;
            match &entry.envelope {
                Some(Envelope {
                    message: Some(Outbound::Message { data, .. }),
                    ..
                }) => messages.push(Outbound::Message {
                    data: data.clone(),
                    at: Some(at),
                }),
                Some(Envelope { gap: true, .. }) => {
                    return Err(format!(
                        "a publisher lost messages of the topic before {at}"
                    ))
                }
                _ => tracing::warn!(
                    %at,
                    "redis bus: an entry of a topic's history that is not courier's; skipped"
                ),
            }
        }
        if next != latest.offset().saturating_add(1) {
            return Err(gone());
        }
        Ok(messages)
    }
}

impl Entry {
    /// `[id, [field, value, …]]`, the id `OFFSET-0`, the fields `d` (the envelope) and `t`
    /// (ms); `None` for another shape. An entry whose envelope is not courier's is kept, as
    /// such, so that its offset still counts.
    fn parse(entry: Value) -> Option<Self> {
        let Value::Array(parts) = entry else {
            return None;
        };
        let [id, fields] = <[Value; 2]>::try_from(parts).ok()?;
        let offset = text(&id)?.split_once('-')?.0.parse().ok()?;
        let Value::Array(fields) = fields else {
            return None;
        };
        let mut ms = None;
        let mut envelope = None;
        for pair in fields.chunks(2) {
            match (pair.first().and_then(text).as_deref(), pair.get(1)) {
                (Some("t"), Some(value)) => ms = number(value),
                (Some("d"), Some(Value::BulkString(bytes))) => envelope = Envelope::read(bytes),
                _ => {}
            }
        }
        Some(Self {
            offset,
            ms: ms?,
            envelope,
        })
    }
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(text) => Some(text.clone()),
        Value::Int(n) => Some(n.to_string()),
        _ => None,
    }
}

fn number(value: &Value) -> Option<u64> {
    match value {
        Value::Int(n) => u64::try_from(*n).ok(),
        other => text(other)?.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(offset: u64, ms: u64, envelope: Envelope) -> Value {
        Value::Array(vec![
            Value::BulkString(format!("{offset}-0").into_bytes()),
            Value::Array(vec![
                Value::BulkString(b"d".to_vec()),
                Value::BulkString(envelope.to_bytes()),
                Value::BulkString(b"t".to_vec()),
                Value::BulkString(ms.to_string().into_bytes()),
            ]),
        ])
    }

    fn said(n: u64) -> Envelope {
        Envelope::message("a1", Outbound::message(json!(n)))
    }

    fn snapshot(latest: u64, entries: Vec<Value>) -> Snapshot {
        Snapshot::parse(Value::Array(vec![
            Value::BulkString(b"e1".to_vec()),
            Value::BulkString(latest.to_string().into_bytes()),
            Value::BulkString(b"100".to_vec()),
            Value::BulkString(b"0".to_vec()),
            Value::Array(entries),
        ]))
        .expect("a snapshot")
    }

    fn at(text: &str) -> Position {
        text.parse().unwrap()
    }

    fn kept() -> History {
        History::new(100, Duration::from_secs(60))
    }

    #[test]
    fn the_messages_after_a_position_are_recovered_in_order() {
        let read = snapshot(
            3,
            vec![entry(2, 99_000, said(2)), entry(3, 99_500, said(3))],
        );
        assert_eq!(read.latest, at("e1:3"));
        assert_eq!(
            read.after(&at("e1:1"), kept()).unwrap(),
            vec![
                Outbound::Message {
                    data: json!(2),
                    at: Some(at("e1:2"))
                },
                Outbound::Message {
                    data: json!(3),
                    at: Some(at("e1:3"))
                },
            ]
        );
        assert_eq!(read.after(&at("e1:3"), kept()).unwrap(), vec![]);
    }

    #[test]
    fn what_the_history_cannot_honour_is_refused() {
        let read = snapshot(3, vec![entry(3, 99_000, said(3))]);
        for (since, why) in [
            ("e2:1", "begun again"),
            ("e1:4", "past the topic's latest position"),
            ("e1:1", "no longer holds e1:2"),
        ] {
            let err = read.after(&at(since), kept()).unwrap_err();
            assert!(err.contains(why), "{since}: {err}");
        }
        // Older than the age: gone, though the stream still has it.
        let old = snapshot(
            2,
            vec![entry(1, 10_000, said(1)), entry(2, 99_000, said(2))],
        );
        assert!(old
            .after(&at("e1:0"), kept())
            .unwrap_err()
            .contains("no longer holds e1:1"));
        assert_eq!(old.after(&at("e1:1"), kept()).unwrap().len(), 1);
        // More than the count behind: gone, though the stream (trimmed about the count) still
        // has it.
        let many = snapshot(3, (1..=3).map(|n| entry(n, 99_000, said(n))).collect());
        let two = History::new(2, Duration::from_secs(60));
        assert!(many
            .after(&at("e1:0"), two)
            .unwrap_err()
            .contains("no longer holds e1:1"));
        assert_eq!(many.after(&at("e1:1"), two).unwrap().len(), 2);
        // A gap marker cannot be recovered across.
        let gap = snapshot(
            2,
            vec![
                entry(1, 99_000, Envelope::gap("a1")),
                entry(2, 99_000, said(2)),
            ],
        );
        assert!(gap
            .after(&at("e1:0"), kept())
            .unwrap_err()
            .contains("lost messages"));
        assert_eq!(gap.after(&at("e1:1"), kept()).unwrap().len(), 1);
    }

    #[test]
    fn replies_that_are_not_the_scripts_are_refused_and_foreign_entries_skipped() {
        assert!(Snapshot::parse(Value::Nil).is_none());
        assert!(Snapshot::parse(Value::Array(vec![Value::Int(1)])).is_none());
        let bad_epoch = Value::Array(vec![
            Value::BulkString(b"not an epoch!".to_vec()),
            Value::Int(0),
            Value::Int(1),
            Value::Int(0),
            Value::Array(vec![]),
        ]);
        assert!(Snapshot::parse(bad_epoch).is_none());
        let foreign = Value::Array(vec![
            Value::BulkString(b"1-0".to_vec()),
            Value::Array(vec![
                Value::BulkString(b"d".to_vec()),
                Value::BulkString(b"hello".to_vec()),
                Value::BulkString(b"t".to_vec()),
                Value::BulkString(b"99000".to_vec()),
            ]),
        ]);
        let read = snapshot(2, vec![foreign, entry(2, 99_000, said(2))]);
        assert_eq!(read.after(&at("e1:0"), kept()).unwrap().len(), 1);
    }

    #[test]
    fn keys_stay_apart_whatever_the_topic() {
        let keys = Keys::new("courier:", "chat.room:{\"room\":\"h:x\"}");
        assert_eq!(keys.channel, "courier:chat.room:{\"room\":\"h:x\"}");
        assert_eq!(keys.stream, "courier:h:chat.room:{\"room\":\"h:x\"}");
        assert_eq!(keys.meta, "courier:m:chat.room:{\"room\":\"h:x\"}");
    }
}

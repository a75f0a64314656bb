//! An `[...endpoints.NAME]` table to an [`EndpointDef`], through the heads' own builders.
//!
//! Checked here, because only a file can get them wrong: exactly one verb key, and no key that
//! belongs to another head. Everything else (names, paths, timeouts, retry policies) is the
//! builder's check when the source is built.

use super::json;
use super::key_path::KeyPath;
use super::raw::RawEndpoint;
use crate::error::{ConfigurationError, ErrorCode};
use crate::tree::endpoint::{
    ChannelEndpoint, ChannelHandler, ChannelHandlers, EndpointDef, HttpEndpoint, StreamEndpoint,
};

/// The keys that pick an endpoint's head, in the order the docs list them.
const VERBS: [&str; 9] = [
    "get", "post", "put", "patch", "delete", "del", "stream", "channel", "room",
];

/// Applies the keys every head shares, through that head's builder methods.
macro_rules! shared_options {
    ($endpoint:expr, $raw:expr, $at:expr) => {{
        let mut endpoint = $endpoint.settings($raw.layer_settings());
        if let Some(headers) = $raw.headers {
            endpoint = endpoint.headers(headers);
        }
        if let Some(meta) = $raw.meta {
            for (key, value) in json::table(meta, &$at.key("meta"))? {
                endpoint = endpoint.meta(key, value);
            }
        }
        if let Some(session) = $raw.session {
            endpoint = endpoint.session(session);
        }
        if let Some(forward) = $raw.forward {
            endpoint = endpoint.forward(forward);
        }
        endpoint
    }};
}

/// A room's one handler: each message a subscriber sends goes to every subscriber of its
/// topic, the sender included, on every instance sharing the hub's bus.
async fn relay(
    peer: std::sync::Arc<dyn crate::tree::endpoint::Peer>,
    message: serde_json::Value,
) -> Result<(), crate::BoxError> {
    peer.publish(message)
}

/// The endpoint the table at `at` describes, and the key of its verb (`get`, `stream`, …).
pub(super) fn endpoint(
    mut raw: RawEndpoint,
    at: &KeyPath,
) -> Result<(EndpointDef, &'static str), ConfigurationError> {
    let (verb, path) = take_verb(&mut raw, at)?;
    match verb {
        "stream" | "channel" | "room" => {
            let http_only = [
                ("reads", raw.reads.is_some()),
                ("response_type", raw.response_type.is_some()),
                ("stream_response", raw.stream_response.is_some()),
                ("sensitive_variables", raw.sensitive_variables.is_some()),
                ("cache", raw.cache.is_some()),
            ];
            refuse(&http_only, "HTTP endpoints", verb, at)?;
        }
        _ => {}
    }
    if verb != "channel" {
        // A room takes messages by nature.
        let channel_only = [("send", raw.send.is_some())];
        refuse(&channel_only, "remote channels", verb, at)?;
    }
    if verb != "room" && raw.topic.is_some() {
        // A remote channel's process decides who shares its messages: a topic here would do
        // nothing.
        return Err(ConfigurationError::new(
            ErrorCode::ConfigInvalid,
            "`topic` groups the subscribers of a room (a channel served here); this endpoint is \
             not one, and a remote channel's subscribers are grouped by the process serving it",
        )
        .at(at.key("topic").as_str()));
    }

    let def = match verb {
        "stream" => shared_options!(StreamEndpoint::get(path), raw, at).into(),
        "room" => {
            let mut room = ChannelEndpoint::implement(ChannelHandler::Duplex(
                ChannelHandlers::on_message(relay),
            ));
            if let Some(names) = raw.topic.take() {
                room = room.topic_variables(names);
            }
            shared_options!(room, raw, at).into()
        }
        "channel" => {
            let mut channel = ChannelEndpoint::connect(path);
            if raw.send == Some(true) {
                channel = channel.send();
            }
            shared_options!(channel, raw, at).into()
        }
        _ => {
            let mut http = match verb {
                "post" => HttpEndpoint::post(path),
                "put" => HttpEndpoint::put(path),
                "patch" => HttpEndpoint::patch(path),
                "delete" | "del" => HttpEndpoint::delete(path),
                _ => HttpEndpoint::get(path),
            };
            if raw.reads == Some(true) {
                http = http.reads();
            }
            if let Some(response_type) = raw.response_type {
                http = http.response_type(response_type);
            }
            if raw.stream_response == Some(true) {
                http = http.stream_response();
            }
            if raw.sensitive_variables == Some(true) {
                http = http.sensitive_variables();
            }
            shared_options!(http, raw, at).into()
        }
    };
    Ok((def, verb))
}

/// Takes the one verb key out of the table, or says why there is not exactly one.
fn take_verb(
    raw: &mut RawEndpoint,
    at: &KeyPath,
) -> Result<(&'static str, String), ConfigurationError> {
    let room = match raw.room.take() {
        Some(true) => Some(String::new()),
        Some(false) => {
            return Err(ConfigurationError::new(
                ErrorCode::ConfigInvalid,
                "`room = false` declares nothing: a room is `room = true`; leave the key out \
                 otherwise",
            )
            .at(at.key("room").as_str()))
        }
        None => None,
    };
    let slots = [
        raw.get.take(),
        raw.post.take(),
        raw.put.take(),
        raw.patch.take(),
        raw.delete.take(),
        raw.del.take(),
        raw.stream.take(),
        raw.channel.take(),
        room,
    ];
    let mut given = VERBS
        .into_iter()
        .zip(slots)
        .filter_map(|(verb, path)| path.map(|p| (verb, p)));
    let first = given.next();
    let second = given.next();
    match (first, second) {
        (Some(only), None) => Ok(only),
        (None, _) => Err(ConfigurationError::new(
            ErrorCode::ConfigInvalid,
            format!(
                "an endpoint needs exactly one of {}; this one has none",
                VERBS.map(|v| format!("`{v}`")).join(", ")
            ),
        )
        .at(at.as_str())),
        (Some((a, _)), Some((b, _))) => Err(ConfigurationError::new(
            ErrorCode::ConfigInvalid,
            format!(
                "an endpoint needs exactly one of {}; this one has both `{a}` and `{b}`",
                VERBS.map(|v| format!("`{v}`")).join(", ")
            ),
        )
        .at(at.as_str())),
    }
}

/// Fails on the first key present that belongs to another head.
fn refuse(
    keys: &[(&str, bool)],
    belongs_to: &str,
    verb: &str,
    at: &KeyPath,
) -> Result<(), ConfigurationError> {
    match keys.iter().find(|(_, present)| *present) {
        Some((key, _)) => Err(ConfigurationError::new(
            ErrorCode::ConfigInvalid,
            format!("`{key}` applies to {belongs_to} only, and this endpoint is a `{verb}`"),
        )
        .at(at.key(key).as_str())),
        None => Ok(()),
    }
}

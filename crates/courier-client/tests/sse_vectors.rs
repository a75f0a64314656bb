//! The event-stream parser against the 36 conformance vectors in `tests/data/sse/` (see the
//! README there): each vector's chunks fed one by one, compared with the dispatched events, the
//! reconnection-time updates and the last event id after the end of the stream.

use courier_client::sse::parser::{Output, Parser};
use serde_json::Value;

const VECTORS: &str = include_str!("data/sse/conformance-vectors.json");

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digits"))
        .collect()
}

/// The input stream of a vector, as the chunks it is delivered in.
fn chunks(vector: &Value) -> Vec<Vec<u8>> {
    if let Some(chunks) = vector["chunks"].as_array() {
        return chunks
            .iter()
            .map(
                |chunk| match (chunk["text"].as_str(), chunk["hex"].as_str()) {
                    (Some(text), None) => text.as_bytes().to_vec(),
                    (None, Some(h)) => hex(h),
                    _ => panic!("a chunk is text or hex: {chunk}"),
                },
            )
            .collect();
    }
    let generator = &vector["generator"];
    let size = generator["chunk_bytes"].as_u64().expect("chunk_bytes") as usize;
    let stream: Vec<u8> = match generator["kind"].as_str() {
        Some("repeat_stream") => generator["unit_text"]
            .as_str()
            .expect("unit_text")
            .repeat(generator["count"].as_u64().expect("count") as usize)
            .into_bytes(),
        Some("long_line") => format!(
            "{}{}{}",
            generator["prefix"].as_str().expect("prefix"),
            generator["fill_char"]
                .as_str()
                .expect("fill_char")
                .repeat(generator["fill_count"].as_u64().expect("fill_count") as usize),
            generator["suffix"].as_str().expect("suffix"),
        )
        .into_bytes(),
        other => panic!("unknown generator {other:?}"),
    };
    stream.chunks(size).map(<[u8]>::to_vec).collect()
}

/// The expected events as `{event, data, id, retry}` objects.
fn expected_events(expected: &Value) -> Vec<Value> {
    let events = &expected["events"];
    if let Some(events) = events.as_array() {
        return events.clone();
    }
    match events["kind"].as_str() {
        Some("repeat") => {
            vec![events["event"].clone(); events["count"].as_u64().expect("count") as usize]
        }
        Some("single_fill_event") => vec![serde_json::json!({
            "event": events["event"],
            "data": events["fill_char"]
                .as_str()
                .expect("fill_char")
                .repeat(events["fill_count"].as_u64().expect("fill_count") as usize),
            "id": events["id"],
            "retry": events["retry"],
        })],
        other => panic!("unknown expected events {other:?}"),
    }
}

#[test]
fn every_conformance_vector_passes() {
    let file: Value = serde_json::from_str(VECTORS).expect("the vectors file is JSON");
    let vectors = file["vectors"].as_array().expect("a list of vectors");
    assert_eq!(vectors.len(), 36, "the file holds 36 vectors");
    for vector in vectors {
        let name = vector["id"].as_str().expect("an id");
        let mut parser = Parser::new();
        let mut events = Vec::new();
        let mut retries = Vec::new();
        for chunk in chunks(vector) {
            parser
                .feed(&chunk)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            while let Some(out) = parser.next() {
                match out {
                    Output::Event(e) => events.push(serde_json::json!({
                        "event": e.event,
                        "data": e.data,
                        "id": e.id,
                        "retry": e.retry.map(|r| r.as_millis() as u64),
                    })),
                    Output::Retry(r) => retries.push(r.as_millis() as u64),
                }
            }
        }
        parser.finish();
        assert!(parser.next().is_none(), "{name}: nothing after the end");
        let expected = &vector["expected"];
        assert_eq!(events, expected_events(expected), "{name}: events");
        let expected_retries: Vec<u64> = expected["retry_updates"]
            .as_array()
            .expect("retry_updates")
            .iter()
            .map(|r| r.as_u64().expect("a number"))
            .collect();
        assert_eq!(retries, expected_retries, "{name}: retry updates");
        assert_eq!(
            parser.last_event_id(),
            expected["final_last_event_id"].as_str().expect("a string"),
            "{name}: last event id"
        );
    }
}

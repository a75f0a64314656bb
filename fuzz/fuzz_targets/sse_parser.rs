//! The event-stream parser (`courier_client::sse::parser::Parser`) on a server's bytes, in a
//! chunking the input chooses.
//!
//! Input: one byte of mode (which constructor, and the seed of the chunk sizes), one byte of
//! limit, then the stream. The stream is parsed twice, once in chunks and once whole: the parser
//! promises the same events whatever the chunking, so any difference is a bug.

#![no_main]

use courier_client::sse::parser::{Output, Parser, RawEvent, TooLarge};
use libfuzzer_sys::fuzz_target;

/// The id a resumed stream starts from.
const RESUMED_ID: &str = "41";

/// What a parse gave: its outputs in order, then the error it stopped at, if any.
type Parsed = (Vec<Output>, Option<TooLarge>);

fn parser(mode: u8, limit: usize) -> Parser {
    match mode % 3 {
        0 => Parser::new(),
        1 => Parser::with_limit(limit),
        _ => Parser::resuming(RESUMED_ID),
    }
}

/// Chunk sizes from 1 to 64, a small xorshift sequence seeded by the input, so that the same
/// input always splits the same way and a crash reproduces.
fn chunks(stream: &[u8], seed: u8) -> Vec<&[u8]> {
    let mut state = u32::from(seed) | 0x100;
    let mut rest = stream;
    let mut out = Vec::new();
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let size = (state % 64 + 1) as usize;
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        out.push(chunk);
        rest = tail;
    }
    out
}

fn parse(mut parser: Parser, chunks: &[&[u8]], limit: Option<usize>) -> Parsed {
    let mut outputs = Vec::new();
    for chunk in chunks {
        let fed = parser.feed(chunk);
        while let Some(output) = parser.next() {
            check(&output, limit);
            outputs.push(output);
        }
        if let Err(too_large) = fed {
            assert_eq!(Some(too_large.limit), limit.or(Some(16 * 1024 * 1024)));
            return (outputs, Some(too_large));
        }
        assert!(!parser.last_event_id().contains('\0'));
    }
    parser.finish();
    assert!(parser.next().is_none(), "finish dispatches nothing");
    (outputs, None)
}

fn check(output: &Output, limit: Option<usize>) {
    let Output::Event(RawEvent {
        event, data, id, ..
    }) = output
    else {
        return;
    };
    assert!(!event.is_empty(), "an event always has a type");
    assert!(!id.contains('\0'), "an id with NUL is never taken: {id:?}");
    if let Some(limit) = limit {
        assert!(
            data.len() <= limit,
            "{} bytes of data over {limit}",
            data.len()
        );
        // An event type is read from one line, which is bounded; decoded, each byte that is
        // not UTF-8 becomes U+FFFD, three bytes. (`message` is the default, read from none.)
        assert!(event.len() <= 3 * limit || event == "message");
    }
}

fuzz_target!(|input: &[u8]| {
    let [mode, limit, stream @ ..] = input else {
        return;
    };
    let limit = usize::from(*limit) + 1;
    let bounded = (mode % 3 == 1).then_some(limit);
    let split = parse(parser(*mode, limit), &chunks(stream, *mode), bounded);
    let whole = parse(parser(*mode, limit), &[stream], bounded);
    assert_eq!(split, whole, "the chunking changed what was parsed");
});

//! The event-stream parser: bytes in any chunking → events, by the WHATWG HTML standard's "event
//! stream interpretation".

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// One dispatched event, as the event stream spelled it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawEvent {
    /// The event type: the last `event` field of its block, `message` when none.
    pub event: String,
    /// The `data` fields of its block joined with line feeds.
    pub data: String,
    /// The last event id at dispatch (the latest `id` field so far, here or in an earlier
    /// block); empty when none was ever given.
    pub id: String,
    /// The reconnection time set by a `retry` field since the previous dispatched event.
    pub retry: Option<Duration>,
}

/// What [`Parser::next`] hands out, in stream order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// An event was dispatched (a blank line ended a block with data).
    Event(RawEvent),
    /// A valid `retry` field set the reconnection time, at the moment it was read.
    Retry(Duration),
}

/// A line, or the data of one event, grew past the parser's limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooLarge {
    /// The limit, in bytes.
    pub limit: usize,
}

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "an event-stream line or event is larger than {} bytes",
            self.limit
        )
    }
}

impl std::error::Error for TooLarge {}

/// An incremental event-stream parser.
///
/// Feed it the bytes of a response body as they arrive, in any chunking, and take what it
/// parsed with [`Parser::next`]. It follows the WHATWG rules exactly: one leading byte order
/// mark is dropped; lines end in CRLF, LF or CR (a CR ending one chunk and an LF starting the
/// next are one line end); each line is decoded as UTF-8 with invalid sequences replaced;
/// lines starting with `:` are comments; a line without a colon is a field with an empty value;
/// one space after the colon is dropped; `data` lines accumulate, joined with LF; `event` names
/// the event; `id` sets the last event id unless it contains NUL; `retry` sets the
/// reconnection time when it is all ASCII digits; other fields are ignored; a blank line
/// commits the last event id and dispatches the block's event if it has data. At the end of the
/// stream ([`Parser::finish`]) an unterminated line and an undispatched block are dropped.
///
/// Work is linear in the input: each byte is looked at once, whatever the chunking. A line or an
/// event's data over the limit ([`Parser::with_limit`], 16 MiB by default) is an error, so a
/// server cannot make the parser hold unbounded memory.
///
/// ```
/// use courier_client::sse::parser::{Output, Parser};
///
/// let mut parser = Parser::new();
/// parser.feed(b"id: 7\ndata: {\"n\":").unwrap();
/// parser.feed(b"1}\r\n\r\n").unwrap();
/// let Some(Output::Event(event)) = parser.next() else { panic!("an event") };
/// assert_eq!((event.event.as_str(), event.data.as_str(), event.id.as_str()), ("message", "{\"n\":1}", "7"));
/// assert_eq!(parser.last_event_id(), "7");
/// ```
#[derive(Debug)]
pub struct Parser {
    /// Bytes of a leading byte order mark matched so far; `None` once the start is past.
    bom: Option<usize>,
    /// The current line's bytes, without its end.
    line: Vec<u8>,
    /// The last byte was a CR: an LF right after it belongs to the same line end.
    after_cr: bool,
    data: String,
    event: String,
    id_buffer: String,
    last_event_id: String,
    retry: Option<Duration>,
    out: VecDeque<Output>,
    limit: usize,
}

impl Default for Parser {
    fn default() -> Self {
        Self::new()
    }
}

impl Parser {
    /// A parser for a new stream, with the default limit of 16 MiB per line and per event.
    pub fn new() -> Self {
        Self::with_limit(16 * 1024 * 1024)
    }

    /// A parser whose lines and events' data may not grow past `limit` bytes.
    pub fn with_limit(limit: usize) -> Self {
        Self {
            bom: Some(0),
            line: Vec::new(),
            after_cr: false,
            data: String::new(),
            event: String::new(),
            id_buffer: String::new(),
            last_event_id: String::new(),
            retry: None,
            out: VecDeque::new(),
            limit,
        }
    }

    /// A parser for a stream resumed after `last_event_id` (a reconnection): the id events
    /// carry until the server sends another.
    pub fn resuming(last_event_id: impl Into<String>) -> Self {
        let last_event_id = last_event_id.into();
        Self {
            id_buffer: last_event_id.clone(),
            last_event_id,
            ..Self::new()
        }
    }

    /// The last event id: the latest `id` committed by a blank line; empty when none.
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// Parses the next chunk of the stream.
    ///
    /// # Errors
    ///
    /// [`TooLarge`] when a line or an event's data grows past the limit; the parser should then
    /// be dropped with its stream.
    pub fn feed(&mut self, mut chunk: &[u8]) -> Result<(), TooLarge> {
        if let Some(matched) = self.bom {
            chunk = self.skip_bom(matched, chunk);
        }
        while !chunk.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if chunk[0] == b'\n' {
                    chunk = &chunk[1..];
                    continue;
                }
            }
            match memchr::memchr2(b'\r', b'\n', chunk) {
                Some(end) => {
                    self.extend_line(&chunk[..end])?;
                    self.after_cr = chunk[end] == b'\r';
                    chunk = &chunk[end + 1..];
                    self.end_line()?;
                }
                None => {
                    self.extend_line(chunk)?;
                    chunk = &[];
                }
            }
        }
        Ok(())
    }

    /// Ends the stream: an unterminated line and an undispatched block are dropped.
    pub fn finish(&mut self) {
        self.line.clear();
        self.data.clear();
        self.event.clear();
        self.after_cr = false;
    }

    /// The next event or reconnection-time update parsed so far.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// Drops what is left of a leading byte order mark; a partial match that fails is the
    /// stream's first bytes after all.
    fn skip_bom<'a>(&mut self, mut matched: usize, chunk: &'a [u8]) -> &'a [u8] {
        let mut rest = chunk;
        while matched < BOM.len() {
            match rest.first() {
                None => {
                    self.bom = Some(matched);
                    return rest;
                }
                Some(&byte) if byte == BOM[matched] => {
                    matched += 1;
                    rest = &rest[1..];
                }
                Some(_) => {
                    self.bom = None;
                    // The bytes matched so far were not a BOM: they begin the first line.
                    // They are 0xEF 0xBB at most, never a line end.
                    self.line.extend_from_slice(&BOM[..matched]);
                    return rest;
                }
            }
        }
        self.bom = None;
        rest
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), TooLarge> {
        if self.line.len() + bytes.len() > self.limit {
            return Err(TooLarge { limit: self.limit });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), TooLarge> {
        if self.bom.is_some() {
            // A line ended before three bytes came: whatever matched was no BOM.
            self.bom = None;
        }
        let line = std::mem::take(&mut self.line);
        let text = String::from_utf8_lossy(&line);
        if text.is_empty() {
            self.dispatch();
        } else if !text.starts_with(':') {
            let (field, value) = match text.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (&*text, ""),
            };
            self.field(field, value)?;
        }
        drop(text);
        // Keep the line's allocation for the next one.
        self.line = line;
        self.line.clear();
        Ok(())
    }

    fn field(&mut self, field: &str, value: &str) -> Result<(), TooLarge> {
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > self.limit {
                    return Err(TooLarge { limit: self.limit });
                }
                self.data.push_str(value);
                self.data.push('\n');
            }
            "event" => value.clone_into(&mut self.event),
            "id" if !value.contains('\0') => value.clone_into(&mut self.id_buffer),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                // All digits: only a value too large for u64 fails, and it saturates.
                let ms = value.parse::<u64>().unwrap_or(u64::MAX);
                let retry = Duration::from_millis(ms);
                self.retry = Some(retry);
                self.out.push_back(Output::Retry(retry));
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self) {
        self.last_event_id.clone_from(&self.id_buffer);
        if self.data.is_empty() {
            self.event.clear();
            return;
        }
        self.data.pop();
        let event = if self.event.is_empty() {
            "message".to_owned()
        } else {
            std::mem::take(&mut self.event)
        };
        self.out.push_back(Output::Event(RawEvent {
            event,
            data: std::mem::take(&mut self.data),
            id: self.last_event_id.clone(),
            retry: self.retry.take(),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]]) -> (Vec<RawEvent>, Vec<u64>, String) {
        let mut parser = Parser::new();
        let mut events = Vec::new();
        let mut retries = Vec::new();
        for chunk in chunks {
            parser.feed(chunk).expect("under the limit");
            while let Some(out) = parser.next() {
                match out {
                    Output::Event(e) => events.push(e),
                    Output::Retry(r) => retries.push(r.as_millis() as u64),
                }
            }
        }
        parser.finish();
        assert!(parser.next().is_none());
        (events, retries, parser.last_event_id().to_owned())
    }

    fn data(chunks: &[&[u8]]) -> Vec<String> {
        parse(chunks).0.into_iter().map(|e| e.data).collect()
    }

    #[test]
    fn one_leading_bom_is_dropped_even_split() {
        assert_eq!(data(&[b"\xEF\xBB", b"\xBFdata: a\n\n"]), ["a"]);
        // A second BOM is part of the field name, an unknown field.
        assert!(data(&[b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n"]).is_empty());
        // Not a BOM after all: the bytes start the first line (an unknown field here).
        assert_eq!(data(&[b"\xEF\xBB", b"data: x\n\ndata: y\n\n"]), ["y"]);
    }

    #[test]
    fn lines_end_in_crlf_lf_or_cr_also_across_chunks() {
        assert_eq!(data(&[b"data: a\r\ndata: b\rdata: c\n\r\n"]), ["a\nb\nc"]);
        assert_eq!(data(&[b"data: a\r", b"\n\r", b"\n"]), ["a"]);
        // A CR then something else across chunks: two line ends, the second a blank line.
        assert_eq!(data(&[b"data: a\r", b"\rdata: b\n\n"]), ["a", "b"]);
    }

    #[test]
    fn comments_fields_and_the_space_after_the_colon() {
        let (events, _, _) = parse(&[
            b": a comment\ndata:no space\ndata:  two spaces\ndata\nevent: tick\nfoo: bar\n\n",
        ]);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "no space\n two spaces\n");
        assert_eq!(events[0].event, "tick");
    }

    #[test]
    fn ids_with_nul_are_ignored_and_ids_persist() {
        let (events, _, last) = parse(&[b"id: 1\ndata: a\n\nid: x\0y\ndata: b\n\ndata: c\n\n"]);
        let ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["1", "1", "1"]);
        assert_eq!(last, "1");
        // Committed at a blank line even when nothing is dispatched.
        assert_eq!(parse(&[b"id: 9\n\n"]).2, "9");
        // Not committed without a blank line.
        assert_eq!(parse(&[b"id: 9\n"]).2, "");
    }

    #[test]
    fn retry_only_with_ascii_digits() {
        let (events, retries, _) =
            parse(&[b"retry: 50\ndata: a\n\nretry: 5x\nretry: \nretry: -1\ndata: b\n\n"]);
        assert_eq!(retries, [50]);
        assert_eq!(events[0].retry, Some(Duration::from_millis(50)));
        assert_eq!(events[1].retry, None);
    }

    #[test]
    fn empty_data_dispatches_nothing_and_resets_the_type() {
        let (events, _, _) = parse(&[b"event: x\n\ndata: a\n\n"]);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].event, "message");
    }

    #[test]
    fn end_of_stream_drops_the_unfinished() {
        assert!(data(&[b"data: a\n"]).is_empty());
        assert!(data(&[b"data: a"]).is_empty());
    }

    #[test]
    fn invalid_utf8_is_replaced_and_split_characters_join() {
        assert_eq!(data(&[b"data: a", b"\xFF", b"b\n\n"]), ["a\u{FFFD}b"]);
        assert_eq!(data(&[b"data: \xC3", b"\xA9\n\n"]), ["\u{e9}"]);
    }

    #[test]
    fn a_line_over_the_limit_is_an_error() {
        let mut parser = Parser::with_limit(8);
        assert!(parser.feed(b"data: 12").is_ok());
        assert_eq!(parser.feed(b"3"), Err(TooLarge { limit: 8 }));
        // Lines within the limit whose data together exceed it.
        let mut parser = Parser::with_limit(10);
        parser.feed(b"data: 1234\ndata: 5\n").unwrap();
        assert_eq!(parser.feed(b"data: 567\n"), Err(TooLarge { limit: 10 }));
    }

    #[test]
    fn a_resumed_stream_keeps_its_id() {
        let mut parser = Parser::resuming("41");
        parser.feed(b"data: a\n\n").unwrap();
        let Some(Output::Event(event)) = parser.next() else {
            panic!("an event")
        };
        assert_eq!(event.id, "41");
    }
}

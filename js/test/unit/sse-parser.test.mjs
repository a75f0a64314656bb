// The event-stream parser, by the WHATWG rules (the Rust parser's cases, and more).

import assert from "node:assert/strict";
import { test } from "node:test";
import { EventStreamParser } from "../../dist/sse-parser.js";

const bytes = (chunk) => (typeof chunk === "string" ? new TextEncoder().encode(chunk) : new Uint8Array(chunk));

/** Parses `chunks` (strings or byte arrays); returns events, retries and the last event id. */
function parse(chunks, parser = new EventStreamParser()) {
  const events = [];
  const retries = [];
  for (const chunk of chunks) {
    for (const item of parser.push(bytes(chunk))) {
      if (item.kind === "event") events.push(item);
      else retries.push(item.ms);
    }
  }
  parser.finish();
  return { events, retries, last: parser.lastEventId };
}

const data = (chunks) => parse(chunks).events.map((e) => e.data);

test("one leading BOM is dropped, even split across chunks", () => {
  assert.deepEqual(data([[0xef, 0xbb], [0xbf, ...bytes("data: a\n\n")]]), ["a"]);
  // A second BOM is part of the field name: an unknown field.
  assert.deepEqual(data([[0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, ...bytes("data: a\n\n")]]), []);
});

test("lines end in CRLF, LF or CR, also across chunks", () => {
  assert.deepEqual(data(["data: a\r\ndata: b\rdata: c\n\r\n"]), ["a\nb\nc"]);
  assert.deepEqual(data(["data: a\r", "\n\r", "\n"]), ["a"]);
  // A CR then something else across chunks: two line ends, the second a blank line.
  assert.deepEqual(data(["data: a\r", "\rdata: b\n\n"]), ["a", "b"]);
  // A CR at a chunk's end, then an empty chunk, then the LF.
  assert.deepEqual(data(["data: a\r", "", "\ndata: b\n\n"]), ["a\nb"]);
});

test("chunks split anywhere: mid-line, mid-field, mid-character", () => {
  const whole = bytes('id: 1\nevent: tick\ndata: {"é":"ü€😀"}\n\n');
  for (let cut = 1; cut < whole.length; cut++) {
    const { events } = parse([whole.slice(0, cut), whole.slice(cut)]);
    assert.deepEqual(events, [{ kind: "event", event: "tick", data: '{"é":"ü€😀"}', id: "1" }], `cut at ${cut}`);
  }
  // One byte at a time.
  assert.deepEqual(data([...whole].map((b) => [b])), ['{"é":"ü€😀"}']);
});

test("invalid UTF-8 is replaced", () => {
  assert.deepEqual(data([bytes("data: a"), [0xff], bytes("b\n\n")]), ["a\ufffdb"]);
});

test("comments, fields without a colon, and the one space after the colon", () => {
  const { events } = parse([": a comment\ndata:no space\ndata:  two spaces\ndata\nevent: tick\nfoo: bar\n\n"]);
  assert.equal(events.length, 1);
  assert.equal(events[0].data, "no space\n two spaces\n");
  assert.equal(events[0].event, "tick");
});

test("multi-line data joins with LF; the event type resets after each event", () => {
  const { events } = parse(["event: a\ndata: 1\ndata: 2\n\ndata: 3\n\n"]);
  assert.deepEqual(
    events.map((e) => [e.event, e.data]),
    [
      ["a", "1\n2"],
      ["message", "3"],
    ],
  );
});

test("ids with NUL are ignored; the last id persists across events", () => {
  const { events, last } = parse(["id: 1\ndata: a\n\nid: x\0y\ndata: b\n\ndata: c\n\n"]);
  assert.deepEqual(
    events.map((e) => e.id),
    ["1", "1", "1"],
  );
  assert.equal(last, "1");
  // Committed at a blank line even when nothing is dispatched.
  assert.equal(parse(["id: 9\n\n"]).last, "9");
  // Not committed without a blank line.
  assert.equal(parse(["id: 9\n"]).last, "");
  // An empty id resets it.
  assert.equal(parse(["id: 9\n\nid\n\n"]).last, "");
});

test("retry only with ASCII digits", () => {
  const { retries } = parse(["retry: 50\ndata: a\n\nretry: 5x\nretry: \nretry: -1\nretry: 1.5\ndata: b\n\n"]);
  assert.deepEqual(retries, [50]);
});

test("a block without data dispatches nothing", () => {
  const { events } = parse(["event: x\n\ndata: a\n\n"]);
  assert.equal(events.length, 1);
  assert.equal(events[0].event, "message");
  // `data:` with an empty value is data: an event with empty data.
  assert.deepEqual(data(["data:\n\n"]), [""]);
});

test("the end of the stream drops the unfinished", () => {
  assert.deepEqual(data(["data: a\n"]), []);
  assert.deepEqual(data(["data: a"]), []);
});

test("a restarted parser keeps its last event id and starts fresh", () => {
  const parser = new EventStreamParser();
  parser.push(bytes("id: 41\ndata: a\n\ndata: unfinished"));
  parser.restart();
  const items = parser.push(bytes("\ufeffdata: b\n\n"));
  assert.deepEqual(items, [{ kind: "event", event: "message", data: "b", id: "41" }]);
});

test("a line or data over the limit throws", () => {
  const parser = new EventStreamParser("", 8);
  parser.push(bytes("data: 12"));
  assert.throws(() => parser.push(bytes("3")), RangeError);
  const joined = new EventStreamParser("", 10);
  joined.push(bytes("data: 1234\ndata: 5\n"));
  assert.throws(() => joined.push(bytes("data: 567\n")), RangeError);
});

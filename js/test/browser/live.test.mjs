// Streams and channels through a real proxy, from a page in Chromium: a stream whose upstream
// drops the connection every few events resumes with Last-Event-ID and loses nothing; a chat
// room's hello frame carries auth and headers; heartbeats keep a socket without reconnecting;
// close codes end a channel as the Rust client does.

import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { run, start } from "./harness.mjs";

let fixture;
before(async () => {
  fixture = await start();
});
after(() => fixture?.close());
beforeEach(() => fixture.reset());

const calls = (recorded, path) => recorded.filter((r) => r.path === path);

describe("streams", () => {
  test("a stream resumes after each dropped connection with Last-Event-ID and loses nothing", async () => {
    const page = await fixture.page();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes, { headers: { "x-tenant": "acme" } });
      const seen = [];
      for await (const event of caller.live.ticks({ until: 7, per_connection: 3 })) {
        seen.push({ n: event.data.n, id: event.id });
      }
      return seen;
    });
    assert.deepEqual(result.map((e) => e.n), [1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(result.map((e) => e.id), ["1", "2", "3", "4", "5", "6", "7"]);
    const opened = calls(await fixture.recorded(), "/ticks");
    assert.equal(opened.length, 3, "three connections: 1–3, 4–6, 7");
    assert.deepEqual(opened.map((r) => r.headers["last-event-id"]), [undefined, "3", "6"]);
    assert.ok(opened.every((r) => r.headers["x-tenant"] === "acme"), "default headers on every one");
  });

  test("breaking the loop closes the stream: no further connection", async () => {
    const page = await fixture.page();
    const got = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes);
      const seen = [];
      for await (const event of caller.live.ticks({ until: 1000, per_connection: 2 })) {
        seen.push(event.data.n);
        if (seen.length === 3) break;
      }
      await new Promise((r) => setTimeout(r, 400));
      return seen;
    });
    assert.deepEqual(got, [1, 2, 3]);
    assert.equal(calls(await fixture.recorded(), "/ticks").length, 2, "no reconnection after the break");
  });
});

describe("channels", () => {
  test("a chat room: the hello carries auth and headers, messages flow both ways", async () => {
    const page = await fixture.page();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      let connections = 0;
      const caller = (user) =>
        courier.createProxyCaller(routes, {
          proxyPath: { ws: "/api/ws" },
          headers: { "x-tenant": "acme" },
          ws: {
            auth: () => {
              connections += 1;
              return { user };
            },
          },
        });
      const ada = caller("ada").live.room("lobby");
      const bob = caller("bob").live.room("lobby");
      const adaHears = ada[Symbol.asyncIterator]();
      const bobHears = bob[Symbol.asyncIterator]();
      // Open is the socket to the proxy; the proxy joins the upstream room after it. Each says
      // it is there and waits for its own echo, so both are in the room before the test talks.
      const until = async (hears, wanted) => {
        for (;;) {
          const { value } = await hears.next();
          if (value.text === wanted) return value;
        }
      };
      ada.send({ text: "ada is here" });
      await until(adaHears, "ada is here");
      bob.send({ text: "bob is here" });
      await until(bobHears, "bob is here");
      ada.send({ text: "hello bob" });
      const heard = await until(bobHears, "hello bob");
      bob.send({ text: "hi ada" });
      const heardBack = [await until(adaHears, "hello bob"), await until(adaHears, "hi ada")];
      ada.close();
      bob.close();
      return { heard, heardBack, connections, state: ada.state };
    });
    assert.deepEqual(result.heard, { from: "ada", text: "hello bob" });
    assert.deepEqual(result.heardBack, [
      { from: "ada", text: "hello bob" },
      { from: "bob", text: "hi ada" },
    ]);
    assert.equal(result.connections, 2, "auth evaluated once per connection");
    assert.equal(result.state, "closed");
    const handshakes = calls(await fixture.recorded(), "/rooms/lobby");
    assert.equal(handshakes.length, 2);
    assert.ok(handshakes.every((h) => h.headers["x-tenant"] === "acme"), "the hello's headers joined the handshake");
  });

  test("heartbeats are answered: the socket stays, with no reconnection", async () => {
    const page = await fixture.page();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes, {
        proxyPath: { ws: "/api/ws" },
        ws: { heartbeat: { intervalMs: 100, timeoutMs: 300 } },
      });
      const room = caller.live.room("beats");
      const states = [];
      room.onState((state) => states.push(state));
      await room.opened;
      await new Promise((r) => setTimeout(r, 1200));
      room.send({ text: "still here" });
      const message = (await room[Symbol.asyncIterator]().next()).value;
      room.close();
      return { states, message };
    });
    assert.deepEqual(result.message, { from: "anonymous", text: "still here" });
    assert.ok(!result.states.includes("reconnecting"), `states: ${result.states}`);
    assert.equal(calls(await fixture.recorded(), "/rooms/beats").length, 1, "one connection throughout");
  });

  test("close codes: 1000 ends the messages, an application code fails them, push-only takes no send", async () => {
    const page = await fixture.page();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes, { proxyPath: { ws: "/api/ws" } });
      const items = [];
      for await (const item of caller.live.news("bye")) items.push(item.text);
      let kicked;
      try {
        for await (const item of caller.live.news("kick")) items.push(item.text);
      } catch (e) {
        kicked = { name: e.name, kind: e.kind, code: e.code, reason: e.reason };
      }
      const feed = caller.live.news("daily");
      let pushOnly;
      try {
        feed.send({ text: "no" });
      } catch (e) {
        pushOnly = e.kind;
      }
      feed.close();
      return { items, kicked, pushOnly };
    });
    assert.deepEqual(result.items, ["item 1"]);
    assert.deepEqual(result.kicked, { name: "ChannelError", kind: "closed", code: 4001, reason: "kicked" });
    assert.equal(result.pushOnly, "push-only");
  });

  test("a full queue is the sender's error, never a silent drop", async () => {
    const page = await fixture.page();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes, {
        proxyPath: { ws: "/api/ws" },
        ws: { messageQueue: { maxCount: 2 } },
      });
      const room = caller.live.room("queue");
      room.send({ text: "one" });
      room.send({ text: "two" });
      let third;
      try {
        room.send({ text: "three" });
      } catch (e) {
        third = e.kind;
      }
      const it = room[Symbol.asyncIterator]();
      const got = [(await it.next()).value.text, (await it.next()).value.text];
      room.close();
      return { third, got };
    });
    assert.equal(result.third, "queue-full");
    assert.deepEqual(result.got, ["one", "two"], "the queued ones were sent, in order, once open");
  });
});

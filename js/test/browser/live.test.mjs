// Streams and channels through a real proxy, from a page in Chromium: a stream whose upstream
// drops the connection every few events resumes with Last-Event-ID and loses nothing; a chat
// room's hello frame carries auth and headers; heartbeats keep a socket without reconnecting;
// close codes end a channel as the Rust client does; a channel refused for good (by the
// upstream's handshake, or by the proxy itself) is told to the page as a close code 4400–4499
// and never redialled, and one whose upstream keeps failing is redialled with growing waits; a
// page whose network dropped gets, on reconnecting, what its room said meanwhile, and one away
// for longer than the room's history reaches joins afresh.

import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { relay, run, start } from "./harness.mjs";

let fixture;
before(async () => {
  fixture = await start();
});
after(() => fixture?.close());
beforeEach(() => fixture.reset());

const calls = (recorded, path) => recorded.filter((r) => r.path === path);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The backoff of the channels below: 100, 200, 400, 800, 1600 ms … without jitter. */
const BACKOFF = { initialMs: 100, maxMs: 5000, factor: 2, jitter: false };

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

describe("channels refused or failing", () => {
  test("an upstream that refuses the handshake with 403: the channel ends `refused` (4403, UPSTREAM_REFUSED), never redialled", async () => {
    const page = await fixture.page();
    const result = await run(
      page,
      fixture.routes,
      async ({ courier, routes, arg }) => {
        const caller = courier.createProxyCaller(routes, { proxyPath: { ws: "/api/ws" }, ws: { backoff: arg } });
        const feed = caller.live.news("forbidden");
        const states = [];
        feed.onState((state) => states.push(state));
        try {
          for await (const item of feed) return { item };
          return { ended: true };
        } catch (e) {
          const { name, kind, code, status, refusal, reason } = e;
          return { error: { name, kind, code, status, refusal, reason }, isChannelError: e instanceof courier.ChannelError, states };
        }
      },
      BACKOFF,
    );
    assert.ok(result.error, `the channel should have failed: ${JSON.stringify(result)}`);
    const { reason, ...error } = result.error;
    assert.deepEqual(error, {
      name: "ChannelError",
      kind: "refused",
      code: 4403,
      status: 403,
      refusal: "UPSTREAM_REFUSED",
    });
    assert.ok(reason.startsWith("UPSTREAM_REFUSED: "), `reason: ${reason}`);
    assert.equal(result.isChannelError, true);
    // The proxy accepts the page's socket before it dials the upstream, then closes it 4403.
    assert.deepEqual(result.states, ["open", "closed"]);
    // With a backoff of 100 ms, a redial would have come long before these 2 s are over.
    await sleep(2000);
    assert.equal(calls(await fixture.recorded(), "/news/forbidden").length, 1, "one handshake, no redial");
  });

  test("the proxy's own refusal reaches its own page as a close code (4404, 4400); another origin sees 1006", async () => {
    const closeOf = ({ base, queries }) =>
      Promise.all(
        queries.map(
          (query) =>
            new Promise((resolve) => {
              const socket = new WebSocket(`${base.replace("http", "ws")}/api/ws?${query}`);
              socket.onclose = (e) => resolve({ code: e.code, reason: e.reason });
            }),
        ),
      );
    const queries = [
      "_s=demo&_g=admin&_m=purge", // defined, not exposed
      "_s=demo&_g=live&_m=nope", // not defined at all
      "_s=demo&_g=live&_m=news&_v=%7Bnot", // `_v` is not JSON
    ];
    const own = await (await fixture.page()).evaluate(closeOf, { base: fixture.app, queries });
    assert.equal(own[0].code, 4404);
    assert.ok(own[0].reason.startsWith("ENDPOINT_NOT_IN_ROUTES: "), `reason: ${own[0].reason}`);
    assert.equal(own[1].code, 4404);
    assert.ok(own[1].reason.startsWith("ENDPOINT_NOT_IN_ROUTES: "), `reason: ${own[1].reason}`);
    assert.equal(own[2].code, 4400);
    assert.ok(own[2].reason.startsWith("BAD_REQUEST: "), `reason: ${own[2].reason}`);

    // Another site's page gets the HTTP refusal, of which a browser tells it nothing.
    const elsewhere = await (await fixture.page(fixture.elsewhere)).evaluate(closeOf, {
      base: fixture.app,
      queries: queries.slice(0, 1),
    });
    assert.deepEqual(elsewhere, [{ code: 1006, reason: "" }]);
    assert.equal((await fixture.recorded()).length, 0, "nothing reached the upstream");
  });

  test("an upstream that accepts and at once closes with 1011: redialled with growing waits, at most 6 handshakes in 3 s", async () => {
    const page = await fixture.page();
    const seen = [];
    page.on("websocket", (socket) => seen.push(socket.url()));
    const states = await run(
      page,
      fixture.routes,
      async ({ courier, routes, arg }) => {
        const caller = courier.createProxyCaller(routes, { proxyPath: { ws: "/api/ws" }, ws: { backoff: arg } });
        const feed = caller.live.news("flaky");
        const states = [];
        feed.onState((state) => states.push(state));
        await new Promise((r) => setTimeout(r, 3000));
        feed.close();
        return states;
      },
      BACKOFF,
    );
    const handshakes = calls(await fixture.recorded(), "/news/flaky").length;
    // The proxy's channel client redials the upstream itself (its backoff: 100, 200, 400, 800 …
    // ms, the fixture's without jitter): handshakes at about 0, 100, 300, 700 and 1500 ms.
    // Before a connection had to be stable to reset the backoff, every redial waited the first
    // wait: about 30 in 3 s.
    assert.ok(handshakes >= 3 && handshakes <= 6, `${handshakes} handshakes in 3 s`);
    // Meanwhile the page's own socket to the proxy stays open: one socket, never reconnecting.
    assert.deepEqual(states, ["open", "closed"]);
    assert.equal(seen.length, 1);
  });

  test("an upstream whose handshake fails with 503: the proxy closes the page's socket with 1011 at once, and the page redials with growing waits", async () => {
    const page = await fixture.page();
    const raw = await page.evaluate(
      (app) =>
        new Promise((resolve) => {
          const socket = new WebSocket(`${app.replace("http", "ws")}/api/ws?_s=demo&_g=live&_m=news&_v=%22unavailable%22`);
          let opened = false;
          socket.onopen = () => (opened = true);
          socket.onclose = (e) => resolve({ opened, code: e.code });
        }),
      fixture.app,
    );
    assert.deepEqual(raw, { opened: true, code: 1011 }, "accepted, then closed with 1011: a failure that may pass");

    await fixture.reset();
    const states = await run(
      page,
      fixture.routes,
      async ({ courier, routes, arg }) => {
        const caller = courier.createProxyCaller(routes, { proxyPath: { ws: "/api/ws" }, ws: { backoff: arg } });
        const start = performance.now();
        const feed = caller.live.news("unavailable");
        const states = [];
        feed.onState((state) => states.push({ state, at: performance.now() - start }));
        await new Promise((r) => setTimeout(r, 3000));
        feed.close();
        return states;
      },
      BACKOFF,
    );
    const opens = states.filter((s) => s.state === "open");
    // Each socket opens and is closed at once, so none is stable and the backoff never resets:
    // the wait from each close to the next open is at least 100, 200, 400, 800 ms in turn.
    const waits = [];
    for (let i = 0; i + 1 < states.length; i++) {
      if (states[i].state === "reconnecting" && states[i + 1].state === "open") waits.push(states[i + 1].at - states[i].at);
    }
    assert.ok(opens.length >= 3 && opens.length <= 6, `${opens.length} sockets in 3 s`);
    waits.forEach((wait, i) => assert.ok(wait >= 100 * 2 ** i - 5, `wait ${i + 1} was ${wait} ms: ${waits}`));
    assert.deepEqual(
      states.map((s) => s.state).slice(0, 4),
      ["open", "reconnecting", "open", "reconnecting"],
    );
    // Every socket of the page dialled the upstream: the source's retry policy (3 attempts on a
    // 503 by default) makes it up to 3 handshakes each.
    const handshakes = calls(await fixture.recorded(), "/news/unavailable").length;
    assert.ok(handshakes >= opens.length, `${handshakes} handshakes for ${opens.length} sockets`);
  });
});

describe("positions and recovery", () => {
  /**
   * Joins `page` to the chat's room `room` (the fixture's own, on a hub with a history) as
   * `user`, its socket to the proxy at `ws`; what it hears and its states go to
   * `window.member`. Resolves once it heard itself say it is here.
   */
  async function join(page, { user, room, ws }) {
    await run(
      page,
      fixture.chat,
      async ({ courier, routes, arg }) => {
        const caller = courier.createProxyCaller(routes, {
          proxyPath: { ws: arg.ws },
          ws: { auth: { user: arg.user }, backoff: { initialMs: 100, maxMs: 400, factor: 2, jitter: false } },
        });
        const channel = caller.rooms.room(arg.room);
        const member = { channel, heard: [], states: [] };
        window.member = member;
        channel.onState((state) => member.states.push({ state, position: channel.position }));
        (async () => {
          for await (const said of channel) member.heard.push(said);
        })().catch((error) => (member.error = String(error)));
        channel.send({ text: `${arg.user} is here` });
      },
      { user, room, ws },
    );
    await heard(page, `${user} is here`);
  }

  /** Waits until the member on `page` heard `text`. */
  const heard = (page, text) =>
    page.waitForFunction((text) => window.member.heard.some((said) => said.text === text), text, { timeout: 15_000 });

  /** What the member on `page` heard, its states and position. */
  const member = (page) =>
    page.evaluate(() => ({
      heard: window.member.heard,
      states: window.member.states,
      position: window.member.channel.position,
      error: window.member.error,
    }));

  /** The frames of every socket `page` opens, in order: `[{ sent, received }]`, parsed. */
  function sockets(page) {
    const seen = [];
    page.on("websocket", (socket) => {
      const frames = { sent: [], received: [] };
      seen.push(frames);
      socket.on("framesent", (e) => frames.sent.push(JSON.parse(e.payload)));
      socket.on("framereceived", (e) => frames.received.push(JSON.parse(e.payload)));
    });
    return seen;
  }

  /** A position as courier writes one: `EPOCH:OFFSET`. */
  const POSITION = /^[A-Za-z0-9_-]{1,64}:[0-9]+$/;

  /**
   * Ada and Bob in `room`, Ada's socket through a relay: Ada's network is cut, Bob says
   * `while away 1` … `while away N`, and the network is restored. Ada's position before the
   * cut, and her sockets as they spoke.
   */
  async function awayWhileSaid(network, room, count) {
    const ada = await fixture.page();
    const bob = await fixture.page();
    const adaSockets = sockets(ada);
    await join(ada, { user: "ada", room, ws: `${network.origin}/api/ws` });
    await join(bob, { user: "bob", room, ws: "/api/ws" });
    await heard(ada, "bob is here");
    const before = (await member(ada)).position;
    assert.match(before, POSITION);

    network.cut();
    await ada.waitForFunction(() => window.member.channel.state === "reconnecting");
    await bob.evaluate((count) => {
      for (let n = 1; n <= count; n += 1) window.member.channel.send({ text: `while away ${n}` });
    }, count);
    await heard(bob, `while away ${count}`);
    network.restore();
    return { ada, bob, adaSockets, before };
  }

  test("a page whose network dropped gets, on reconnecting, all 20 messages said meanwhile, in order, once each", async () => {
    const network = await relay(fixture.app);
    try {
      const { ada, bob, adaSockets, before } = await awayWhileSaid(network, "recovery", 20);
      await heard(ada, "while away 20");
      // Anything sent twice would have come by now.
      await sleep(500);

      const after = await member(ada);
      assert.equal(after.error, undefined);
      const said = after.heard.filter((m) => m.from !== "chat");
      assert.deepEqual(
        said.map((m) => m.text),
        ["ada is here", "bob is here", ...Array.from({ length: 20 }, (_, i) => `while away ${i + 1}`)],
      );
      assert.ok(said.slice(2).every((m) => m.from === "bob"));
      assert.match(after.position, POSITION);
      assert.notEqual(after.position, before);
      assert.ok(
        after.states.some((s) => s.state === "reconnecting" && s.position === before),
        `the position is kept through the drop: ${JSON.stringify(after.states)}`,
      );

      // The handshakes refused while the network was down sent nothing: two sockets spoke.
      const spoke = adaSockets.filter((socket) => socket.sent.length > 0);
      assert.equal(spoke.length, 2, `${adaSockets.length} sockets`);
      assert.deepEqual(spoke[0].sent[0], { type: "courier.hello", since: null, auth: { user: "ada" } });
      assert.deepEqual(spoke[1].sent[0], { type: "courier.hello", since: before, auth: { user: "ada" } });
      assert.deepEqual(spoke[1].received[0], { type: "courier.at", at: before }, "the server starts from `since`");
      const recovered = spoke[1].received.filter((frame) => frame.type === "courier.message");
      assert.deepEqual(
        recovered.map((frame) => frame.data.text),
        Array.from({ length: 20 }, (_, i) => `while away ${i + 1}`),
      );
      assert.equal(recovered.at(-1).at, after.position);
      await ada.evaluate(() => window.member.channel.close());
      await bob.evaluate(() => window.member.channel.close());
    } finally {
      await network.close();
    }
  });

  test("a page away while more was said than the history keeps: 1012 `messages were missed`, the position forgotten, joined afresh", async () => {
    const network = await relay(fixture.app);
    try {
      // More than the fixture's history of 50 keeps.
      const { ada, bob, adaSockets, before } = await awayWhileSaid(network, "gap", 60);
      // Joined afresh, the room's on_join welcomes it again; from then on it hears the room.
      await ada.waitForFunction(() => window.member.heard.filter((m) => m.from === "chat").length >= 2, null, {
        timeout: 15_000,
      });
      await bob.evaluate(() => window.member.channel.send({ text: "after the gap" }));
      await heard(ada, "after the gap");

      const after = await member(ada);
      assert.equal(after.error, undefined);
      assert.deepEqual(
        after.heard.filter((m) => m.from !== "chat").map((m) => m.text),
        ["ada is here", "bob is here", "after the gap"],
        "what the history no longer held is not sent",
      );
      assert.ok(
        after.states.some((s) => s.state === "reconnecting" && s.position === null),
        `the position is forgotten at the 1012: ${JSON.stringify(after.states)}`,
      );
      assert.match(after.position, POSITION);
      const spoke = adaSockets.filter((socket) => socket.sent.length > 0);
      assert.deepEqual(
        spoke.map((socket) => socket.sent[0].since),
        [null, before, null],
        "the first hello, the one the server could not honour, the fresh one",
      );
      assert.ok(
        spoke[1].received.every((frame) => frame.type !== "courier.message"),
        "nothing was sent to the hello it could not honour",
      );
      await ada.evaluate(() => window.member.channel.close());
      await bob.evaluate(() => window.member.channel.close());
    } finally {
      await network.close();
    }
  });
});

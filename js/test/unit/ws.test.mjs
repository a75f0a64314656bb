// Channels against a fake WebSocket: the address and hello frame, the queue, close codes,
// backoff and heartbeat (with mocked timers), what arrives, and the position a reconnection
// hands back.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ChannelError, createProxyCaller } from "../../dist/index.js";
import { STABLE_MS, backoffDelay } from "../../dist/ws.js";
import { flush } from "../support/fetch.mjs";
import { BASE, routes } from "../support/routes.mjs";
import { fakeWebSocket } from "../support/websocket.mjs";

const NO_JITTER = { initialMs: 100, maxMs: 1000, factor: 2, jitter: false };

function setup(t, options = {}) {
  const WebSocket = fakeWebSocket(t);
  const caller = createProxyCaller(routes, {
    baseUrl: BASE,
    proxyPath: { ws: "/api/ws" },
    ...options,
    ws: { backoff: NO_JITTER, heartbeat: { intervalMs: 0 }, ...options.ws },
  });
  return { WebSocket, caller };
}

/**
 * `expectSocketAfter(ms)`, with `t`'s mocked timers: the next socket of `WebSocket` comes after
 * `ms`, not before.
 */
function socketAfter(t, WebSocket) {
  return (ms) => {
    const count = WebSocket.sockets.length;
    t.mock.timers.tick(ms - 1);
    assert.equal(WebSocket.sockets.length, count, `not before ${ms} ms`);
    t.mock.timers.tick(1);
    assert.equal(WebSocket.sockets.length, count + 1, `after ${ms} ms`);
  };
}

/** Reads the next message of a channel's iterator. */
const next = (iterator) => iterator.next();

/** The hello frame of a first connection with no auth and no default headers. */
const HELLO = { type: "courier.hello", since: null };

describe("connecting", () => {
  test("the address: ws path resolved to ws(s), `_s,_g,_m,_v`, and `_h=1` for the hello every connection sends", (t) => {
    const { WebSocket, caller } = setup(t);
    const room = caller.chat.room("lobby");
    const [socket] = WebSocket.sockets;
    assert.equal(socket.url.protocol, "wss:");
    assert.equal(socket.url.host, "app.example");
    assert.equal(socket.url.pathname, "/api/ws");
    assert.deepEqual(
      [...socket.url.searchParams],
      [
        ["_s", "demo"],
        ["_g", "chat"],
        ["_m", "room"],
        ["_v", '"lobby"'],
        ["_h", "1"],
      ],
    );
    assert.equal(socket.binaryType, "arraybuffer");
    assert.equal(room.state, "connecting");
    socket.open();
    assert.equal(room.state, "open");
    assert.deepEqual(socket.sent, ['{"type":"courier.hello","since":null}'], "no auth, no headers: the hello says only `since`");
    room.close();
  });

  test("http becomes ws; an absolute ws URL stands; protocols are offered", (t) => {
    const WebSocket = fakeWebSocket(t);
    const plain = createProxyCaller(routes, { baseUrl: "http://127.0.0.1:8080", proxyPath: { ws: "/ws" }, ws: { protocols: ["chat.v1"] } });
    plain.market.ticks("x").close();
    const absolute = createProxyCaller(routes, { baseUrl: BASE, proxyPath: { ws: "ws://other.example:9/sock" } });
    absolute.market.ticks("x").close();
    assert.equal(WebSocket.sockets[0].url.origin, "ws://127.0.0.1:8080");
    assert.deepEqual(WebSocket.sockets[0].protocols, ["chat.v1"]);
    assert.equal(WebSocket.sockets[1].url.origin + WebSocket.sockets[1].url.pathname, "ws://other.example:9/sock");
    assert.equal(WebSocket.sockets[1].protocols, undefined);
  });

  test("the hello frame comes first, with auth and headers, announced with `_h=1`", async (t) => {
    const { WebSocket, caller } = setup(t, { headers: { "x-tenant": "acme" }, ws: { auth: { token: "t1" } } });
    const room = caller.chat.with({ headers: { "x-call": "1" } }).room("lobby");
    room.send({ text: "queued 1" });
    room.send({ text: "queued 2" });
    const [socket] = WebSocket.sockets;
    assert.equal(socket.url.searchParams.get("_h"), "1");
    assert.deepEqual([...socket.url.searchParams.keys()], ["_s", "_g", "_m", "_v", "_h"]);
    socket.open();
    assert.deepEqual(socket.frames, [
      { type: "courier.hello", since: null, auth: { token: "t1" }, headers: { "x-call": "1", "x-tenant": "acme" } },
      { text: "queued 1" },
      { text: "queued 2" },
    ]);
    room.send({ text: "direct" });
    assert.deepEqual(socket.frames[3], { text: "direct" });
    await room.opened;
    room.close();
  });

  test("an auth function is called afresh before every connection, and may be async", async (t) => {
    let calls = 0;
    const { WebSocket, caller } = setup(t, { ws: { auth: async () => ({ token: `t${++calls}` }) } });
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const room = caller.chat.room("lobby");
    assert.equal(WebSocket.sockets.length, 0, "waits for the parameters");
    await flush();
    WebSocket.sockets[0].open();
    assert.deepEqual(WebSocket.sockets[0].frames[0], { type: "courier.hello", since: null, auth: { token: "t1" } });
    WebSocket.sockets[0].drop(1006);
    t.mock.timers.tick(100);
    await flush();
    WebSocket.sockets[1].open();
    assert.deepEqual(WebSocket.sockets[1].frames[0], { type: "courier.hello", since: null, auth: { token: "t2" } });
    assert.equal(WebSocket.sockets[1].url.searchParams.get("_h"), "1");
    room.close();
  });

  test("an auth function giving undefined: a hello without `auth`, still announced", (t) => {
    const { WebSocket, caller } = setup(t, { ws: { auth: () => undefined } });
    const room = caller.chat.room("lobby");
    assert.equal(WebSocket.sockets[0].url.searchParams.get("_h"), "1");
    WebSocket.sockets[0].open();
    assert.deepEqual(WebSocket.sockets[0].frames, [HELLO]);
    room.close();
  });

  test("an auth function that throws ends the channel with ChannelError `auth`", async (t) => {
    const { WebSocket, caller } = setup(t, { ws: { auth: () => Promise.reject(new Error("no session")) } });
    const room = caller.chat.room("lobby");
    await assert.rejects(room.opened, (error) => error instanceof ChannelError && error.kind === "auth");
    await assert.rejects(next(room[Symbol.asyncIterator]()), { kind: "auth" });
    assert.equal(room.state, "closed");
    assert.equal(WebSocket.sockets.length, 0);
  });
});

describe("sending", () => {
  test("a message that does not fit the queue is refused, never dropped", (t) => {
    const { WebSocket, caller } = setup(t, { ws: { messageQueue: { maxCount: 2, maxBytes: 30 } } });
    const room = caller.chat.room("lobby");
    room.send("a");
    room.send("b");
    assert.throws(
      () => room.send("c"),
      (error) => error instanceof ChannelError && error.kind === "queue-full" && error.path === "chat.room",
    );
    const bytes = caller.chat.room("hall");
    bytes.send("x".repeat(20)); // 22 bytes of JSON
    assert.throws(() => bytes.send("y".repeat(10)), { kind: "queue-full" });
    bytes.send("é".repeat(2)); // 6 bytes
    WebSocket.sockets[0].open();
    assert.deepEqual(WebSocket.sockets[0].frames, [HELLO, "a", "b"]);
    WebSocket.sockets[1].open();
    assert.deepEqual(WebSocket.sockets[1].frames, [HELLO, "x".repeat(20), "éé"]);
    room.close();
    bytes.close();
  });

  test("a message over maxMessageSize is refused with `too-large`", (t) => {
    const { WebSocket, caller } = setup(t, { ws: { maxMessageSize: 10 } });
    const room = caller.chat.room("lobby");
    WebSocket.sockets[0].open();
    room.send("12345678"); // 10 bytes of JSON
    assert.throws(() => room.send("123456789"), { kind: "too-large" });
    assert.throws(() => room.send("€€€€"), { kind: "too-large" }, "counted in UTF-8 bytes");
    room.close();
  });

  test("send on a push-only channel, on a closed one, or of what is not JSON", (t) => {
    const { caller } = setup(t);
    const ticks = caller.market.ticks("EURUSD");
    assert.throws(() => ticks.send({ price: 1 }), { kind: "push-only" });
    ticks.close();
    const room = caller.chat.room("lobby");
    assert.throws(() => room.send(undefined), { kind: "encode" });
    assert.throws(() => room.send({ n: 1n }), { kind: "encode" });
    room.close();
    assert.throws(() => room.send("late"), { kind: "closed" });
  });
});

describe("receiving", () => {
  test("text and binary frames of JSON; messages kept until read, in order", async (t) => {
    const { WebSocket, caller } = setup(t);
    const room = caller.chat.room("lobby");
    const socket = WebSocket.sockets[0];
    socket.open();
    socket.receive('{"from":"ada","text":"1"}');
    socket.receive(new TextEncoder().encode('{"from":"bob","text":"2"}').buffer);
    socket.receive(new TextEncoder().encode('  "three"'));
    const iterator = room[Symbol.asyncIterator]();
    assert.deepEqual(await next(iterator), { done: false, value: { from: "ada", text: "1" } });
    assert.deepEqual(await next(iterator), { done: false, value: { from: "bob", text: "2" } });
    assert.deepEqual(await next(iterator), { done: false, value: "three" });
    const waiting = next(iterator);
    socket.receive("4");
    assert.deepEqual(await waiting, { done: false, value: 4 });
    room.close();
    assert.deepEqual(await next(iterator), { done: true, value: undefined });
  });

  test("a courier.pong is the heartbeat's answer, never a message", async (t) => {
    const { WebSocket, caller } = setup(t);
    const room = caller.chat.room("lobby");
    const socket = WebSocket.sockets[0];
    socket.open();
    socket.receive('{"type":"courier.pong"}');
    socket.receive('{"type":"other"}');
    const iterator = room[Symbol.asyncIterator]();
    assert.deepEqual(await next(iterator), { done: false, value: { type: "other" } });
    room.close();
  });

  test("a message over maxMessageSize closes the socket and ends with code 1009", async (t) => {
    const { WebSocket, caller } = setup(t, { ws: { maxMessageSize: 8 } });
    const room = caller.chat.room("lobby");
    const socket = WebSocket.sockets[0];
    socket.open();
    socket.receive('"ok"');
    socket.receive('"much too long"');
    const iterator = room[Symbol.asyncIterator]();
    assert.deepEqual(await next(iterator), { done: false, value: "ok" }, "what came before is delivered");
    await assert.rejects(next(iterator), (error) => {
      assert.ok(error instanceof ChannelError);
      assert.equal(error.kind, "closed");
      assert.equal(error.code, 1009);
      return true;
    });
    assert.deepEqual(await next(iterator), { done: true, value: undefined });
    assert.equal(socket.closedWith.code, 1000, "browsers may only close with 1000 or 3000–4999");
    assert.equal(socket.closedWith.reason, "message too big");
    assert.equal(room.state, "closed");
    const binary = caller.chat.room("hall");
    WebSocket.sockets[1].open();
    WebSocket.sockets[1].receive(new Uint8Array(9).buffer);
    await assert.rejects(next(binary[Symbol.asyncIterator]()), { code: 1009 });
  });

  test("a message that is not JSON ends with ChannelError `decode`", async (t) => {
    const { WebSocket, caller } = setup(t);
    const room = caller.chat.room("lobby");
    WebSocket.sockets[0].open();
    WebSocket.sockets[0].receive("not json");
    await assert.rejects(next(room[Symbol.asyncIterator]()), { kind: "decode" });
    assert.ok(WebSocket.sockets[0].closedWith);
    const bad = caller.chat.room("hall");
    WebSocket.sockets[1].open();
    WebSocket.sockets[1].receive(new Uint8Array([0xff, 0xfe]).buffer);
    await assert.rejects(next(bad[Symbol.asyncIterator]()), { kind: "decode" });
  });
});

describe("close codes", () => {
  test("1000 ends the iteration, no reconnect", async (t) => {
    const { WebSocket, caller } = setup(t);
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const room = caller.chat.room("lobby");
    WebSocket.sockets[0].open();
    WebSocket.sockets[0].receive("1");
    WebSocket.sockets[0].drop(1000, "done");
    const seen = [];
    for await (const message of room) seen.push(message);
    assert.deepEqual(seen, [1]);
    t.mock.timers.tick(10_000);
    assert.equal(WebSocket.sockets.length, 1);
    assert.equal(room.state, "closed");
  });

  for (const code of [1003, 1008, 1009, 4000, 4399, 4500, 4999, 1002, 1015]) {
    test(`${code} throws ChannelError \`closed\` with code and reason, no reconnect`, async (t) => {
      const { WebSocket, caller } = setup(t);
      t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
      const room = caller.chat.room("lobby");
      WebSocket.sockets[0].open();
      WebSocket.sockets[0].drop(code, "bad variables");
      await assert.rejects(
        (async () => {
          for await (const message of room) void message;
        })(),
        (error) => {
          assert.ok(error instanceof ChannelError);
          assert.equal(error.kind, "closed");
          assert.equal(error.code, code);
          assert.equal(error.reason, "bad variables");
          return true;
        },
      );
      t.mock.timers.tick(10_000);
      assert.equal(WebSocket.sockets.length, 1);
    });
  }

  for (const code of [1001, 1005, 1006, 1011, 1012, 1013, 1014]) {
    test(`${code} reconnects with backoff`, async (t) => {
      const { WebSocket, caller } = setup(t);
      t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
      const room = caller.chat.room("lobby");
      const states = [];
      room.onState((state) => states.push(state));
      WebSocket.sockets[0].open();
      WebSocket.sockets[0].drop(code);
      assert.equal(room.state, "reconnecting");
      t.mock.timers.tick(99);
      assert.equal(WebSocket.sockets.length, 1);
      t.mock.timers.tick(1);
      assert.equal(WebSocket.sockets.length, 2);
      WebSocket.sockets[1].open();
      WebSocket.sockets[1].receive('"after"');
      assert.deepEqual(await next(room[Symbol.asyncIterator]()), { done: false, value: "after" });
      assert.deepEqual(states, ["open", "reconnecting", "open"]);
      room.close();
      assert.deepEqual(states, ["open", "reconnecting", "open", "closed"]);
    });
  }

  test("4403 with a refusal's reason ends with ChannelError `refused`: status, refusal, no reconnect", async (t) => {
    const { WebSocket, caller } = setup(t);
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const room = caller.chat.room("lobby");
    WebSocket.sockets[0].open();
    WebSocket.sockets[0].drop(4403, "UPSTREAM_REFUSED: forbidden");
    await assert.rejects(
      (async () => {
        for await (const message of room) void message;
      })(),
      (error) => {
        assert.ok(error instanceof ChannelError);
        assert.equal(error.kind, "refused");
        assert.equal(error.code, 4403);
        assert.equal(error.status, 403);
        assert.equal(error.refusal, "UPSTREAM_REFUSED");
        assert.equal(error.reason, "UPSTREAM_REFUSED: forbidden");
        assert.equal(error.path, "chat.room");
        assert.equal(error.message, "`chat.room`: the channel was refused (403): UPSTREAM_REFUSED: forbidden");
        return true;
      },
    );
    assert.equal(room.state, "closed");
    t.mock.timers.tick(60_000);
    assert.equal(WebSocket.sockets.length, 1, "no second socket");
  });

  test("4400–4499: the status is the code − 4000; a reason without `CODE: ` has no refusal", async (t) => {
    const { WebSocket, caller } = setup(t);
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const cases = [
      [4400, "BAD_REQUEST: `_v` is not JSON", 400, "BAD_REQUEST"],
      [4401, "UPSTREAM_REFUSED: sign in: the session expired", 401, "UPSTREAM_REFUSED"],
      [4404, "ENDPOINT_NOT_IN_ROUTES: `chat.room` is not exposed", 404, "ENDPOINT_NOT_IN_ROUTES"],
      [4404, "not here", 404, undefined],
      [4404, "lower_case: not a code", 404, undefined],
      [4499, "", 499, undefined],
    ];
    for (const [index, [code, reason, status, refusal]] of cases.entries()) {
      const room = caller.market.ticks(String(index));
      WebSocket.sockets[index].open();
      WebSocket.sockets[index].drop(code, reason);
      await assert.rejects(next(room[Symbol.asyncIterator]()), (error) => {
        assert.equal(error.kind, "refused");
        assert.equal(error.code, code);
        assert.equal(error.status, status);
        assert.equal(error.refusal, refusal);
        assert.equal(error.reason, reason);
        assert.equal(
          error.message,
          `\`market.ticks\`: the channel was refused (${status})${reason ? `: ${reason}` : ""}`,
        );
        return true;
      });
    }
    t.mock.timers.tick(60_000);
    assert.equal(WebSocket.sockets.length, cases.length);
  });

  test("refused before it opened: `opened` rejects with the refusal", async (t) => {
    const { WebSocket, caller } = setup(t);
    const room = caller.chat.room("lobby");
    WebSocket.sockets[0].drop(4404, "ENDPOINT_NOT_IN_ROUTES: `chat.room` is not exposed");
    await assert.rejects(room.opened, { kind: "refused", status: 404, refusal: "ENDPOINT_NOT_IN_ROUTES" });
    assert.equal(room.state, "closed");
  });
});

describe("backoff", () => {
  test("each failed attempt waits `factor` times longer, up to maxMs; a stable connection resets it", async (t) => {
    const { WebSocket, caller } = setup(t);
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const room = caller.chat.room("lobby");
    const expectSocketAfter = socketAfter(t, WebSocket);
    // A refused handshake looks like 1006 before open.
    WebSocket.sockets[0].drop(1006);
    expectSocketAfter(100);
    WebSocket.sockets[1].drop(1006);
    expectSocketAfter(200);
    WebSocket.sockets[2].drop(1006);
    expectSocketAfter(400);
    WebSocket.sockets[3].drop(1006);
    expectSocketAfter(800);
    WebSocket.sockets[4].drop(1006);
    expectSocketAfter(1000);
    WebSocket.sockets[5].open();
    t.mock.timers.tick(STABLE_MS);
    WebSocket.sockets[5].drop(1001);
    expectSocketAfter(100);
    assert.equal(room.state, "reconnecting");
    room.close();
    t.mock.timers.tick(10_000);
    assert.equal(WebSocket.sockets.length, 7);
  });

  /** A channel with `expectSocketAfter(ms)`: the next socket comes after `ms`, not before. */
  function reconnecting(t) {
    const { WebSocket, caller } = setup(t);
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const room = caller.chat.room("lobby");
    const expectSocketAfter = socketAfter(t, WebSocket);
    return { WebSocket, room, expectSocketAfter, last: () => WebSocket.sockets.at(-1) };
  }

  test("a socket that opens and at once closes with 1011 does not reset it: the waits grow", (t) => {
    const { room, expectSocketAfter, last } = reconnecting(t);
    for (const wait of [100, 200, 400, 800, 1000, 1000]) {
      last().open();
      assert.equal(room.state, "open");
      last().drop(1011, "upstream failed");
      expectSocketAfter(wait);
    }
    // Open for just under STABLE_MS, and only the heartbeat's answer received: still not stable.
    last().open();
    last().receive('{"type":"courier.pong"}');
    t.mock.timers.tick(STABLE_MS - 1);
    last().drop(1011);
    expectSocketAfter(1000);
    room.close();
  });

  test("a connection that stayed open STABLE_MS starts again from the first wait", (t) => {
    const { WebSocket, room, expectSocketAfter, last } = reconnecting(t);
    assert.equal(STABLE_MS, 5000);
    for (const wait of [100, 200, 400]) {
      last().open();
      last().drop(1011);
      expectSocketAfter(wait);
    }
    last().open();
    t.mock.timers.tick(STABLE_MS);
    last().drop(1011);
    expectSocketAfter(100);
    last().open();
    last().drop(1011);
    expectSocketAfter(200);
    room.close();
    assert.equal(WebSocket.sockets.length, 6);
  });

  test("a connection that delivered a message starts again from the first wait", async (t) => {
    const { room, expectSocketAfter, last } = reconnecting(t);
    for (const wait of [100, 200, 400]) {
      last().open();
      last().drop(1011);
      expectSocketAfter(wait);
    }
    last().open();
    last().receive('"hello"');
    last().drop(1011);
    expectSocketAfter(100);
    assert.deepEqual(await next(room[Symbol.asyncIterator]()), { done: false, value: "hello" });
    room.close();
  });

  test("the defaults, and full jitter in [0, delay]", (t) => {
    assert.equal(backoffDelay({ jitter: false }, 1), 500);
    assert.equal(backoffDelay({ jitter: false }, 2), 1000);
    assert.equal(backoffDelay({ jitter: false }, 20), 30_000);
    t.mock.method(Math, "random", () => 0.25);
    assert.equal(backoffDelay(undefined, 3), 500);
    assert.equal(backoffDelay({ initialMs: 100, factor: 3, maxMs: 10_000 }, 3), 225);
  });
});

describe("heartbeat", () => {
  test("a ping every interval; nothing back within the timeout: closed and replaced", async (t) => {
    const { WebSocket, caller } = setup(t, { ws: { heartbeat: { intervalMs: 1000, timeoutMs: 300 } } });
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const room = caller.chat.room("lobby");
    const socket = WebSocket.sockets[0];
    socket.open();
    t.mock.timers.tick(999);
    assert.deepEqual(socket.frames, [HELLO]);
    t.mock.timers.tick(1);
    assert.deepEqual(socket.frames, [HELLO, { type: "courier.ping" }]);
    // The pong arrives: alive.
    socket.receive('{"type":"courier.pong"}');
    t.mock.timers.tick(1000);
    assert.equal(socket.frames.length, 3);
    // Anything at all proves life too.
    t.mock.timers.tick(200);
    socket.receive('"a message"');
    t.mock.timers.tick(100);
    assert.equal(socket.closedWith, undefined);
    // The next ping goes unanswered.
    t.mock.timers.tick(700);
    assert.equal(socket.frames.length, 4);
    t.mock.timers.tick(299);
    assert.equal(socket.closedWith, undefined);
    t.mock.timers.tick(1);
    assert.deepEqual(socket.closedWith, { code: 1000, reason: "heartbeat unanswered" });
    assert.equal(room.state, "reconnecting");
    t.mock.timers.tick(100);
    assert.equal(WebSocket.sockets.length, 2);
    // The old socket's late close event changes nothing.
    socket.drop(1006);
    assert.equal(room.state, "reconnecting");
    WebSocket.sockets[1].open();
    assert.equal(room.state, "open");
    const iterator = room[Symbol.asyncIterator]();
    assert.deepEqual(await next(iterator), { done: false, value: "a message" });
    room.close();
  });
});

describe("ending", () => {
  test("breaking out of the loop closes the socket with 1000", async (t) => {
    const { WebSocket, caller } = setup(t);
    const room = caller.chat.room("lobby");
    WebSocket.sockets[0].open();
    WebSocket.sockets[0].receive("1");
    WebSocket.sockets[0].receive("2");
    for await (const message of room) {
      assert.equal(message, 1);
      break;
    }
    assert.deepEqual(WebSocket.sockets[0].closedWith, { code: 1000, reason: "" });
    assert.equal(room.state, "closed");
  });

  test("close() ends a waiting iteration; `opened` rejects when closed before opening", async (t) => {
    const { caller } = setup(t);
    const room = caller.chat.room("lobby");
    const waiting = next(room[Symbol.asyncIterator]());
    room.close();
    assert.deepEqual(await waiting, { done: true, value: undefined });
    await assert.rejects(room.opened, { kind: "closed" });
  });

  test("the call's signal closes the channel", async (t) => {
    const { WebSocket, caller } = setup(t);
    const controller = new AbortController();
    const room = caller.chat.with({ signal: controller.signal }).room("lobby");
    WebSocket.sockets[0].open();
    controller.abort();
    assert.equal(room.state, "closed");
    assert.ok(WebSocket.sockets[0].closedWith);
    const never = caller.chat.with({ signal: AbortSignal.abort() }).room("x");
    assert.equal(never.state, "closed");
    assert.equal(WebSocket.sockets.length, 1);
  });

  test("a listener that throws is reported; the others still hear", (t) => {
    const { WebSocket, caller } = setup(t);
    const reported = t.mock.method(console, "error", () => {});
    const room = caller.chat.room("lobby");
    const heard = [];
    room.onState(() => {
      throw new Error("bad listener");
    });
    const stop = room.onState((state) => heard.push(state));
    WebSocket.sockets[0].open();
    stop();
    room.close();
    assert.deepEqual(heard, ["open"]);
    assert.equal(reported.mock.callCount(), 2);
  });
});

describe("positions and recovery", () => {
  /** A server's frame giving the channel position `at`. */
  const at = (position) => JSON.stringify({ type: "courier.at", at: position });
  /** A server's frame carrying a message published at `position`. */
  const message = (position, data) => JSON.stringify({ type: "courier.message", at: position, data });

  test("`courier.at` and `courier.message` set the position; only a message's `data` reaches the caller", async (t) => {
    const { WebSocket, caller } = setup(t);
    const room = caller.chat.room("lobby");
    const socket = WebSocket.sockets[0];
    assert.equal(room.position, null);
    socket.open();
    assert.deepEqual(socket.frames, [HELLO], "the first hello: `since: null`");
    socket.receive(at("e1:0"));
    assert.equal(room.position, "e1:0");
    socket.receive(message("e1:1", { from: "ada", text: "one" }));
    assert.equal(room.position, "e1:1", "set as it arrives, before it is read");
    // A message the handler sent to this member alone has no position.
    socket.receive('{"from":"chat","text":"welcome"}');
    assert.equal(room.position, "e1:1");
    socket.receive(message("e1:2", null));
    socket.receive(new TextEncoder().encode(message("e1:3", ["binary"])).buffer);
    assert.equal(room.position, "e1:3");
    const iterator = room[Symbol.asyncIterator]();
    assert.deepEqual(await next(iterator), { done: false, value: { from: "ada", text: "one" } });
    assert.deepEqual(await next(iterator), { done: false, value: { from: "chat", text: "welcome" } });
    assert.deepEqual(await next(iterator), { done: false, value: null }, "`data: null` is a message of null");
    assert.deepEqual(await next(iterator), { done: false, value: ["binary"] });
    const waiting = next(iterator);
    socket.receive(at("e1:9"));
    socket.receive('"after"');
    assert.deepEqual(await waiting, { done: false, value: "after" }, "`courier.at` is never a message");
    assert.equal(room.position, "e1:9");
    room.close();
  });

  test("a reconnection's hello sends the last position given, with auth and headers", async (t) => {
    const { WebSocket, caller } = setup(t, { headers: { "x-tenant": "acme" }, ws: { auth: { token: "t1" } } });
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const room = caller.chat.room("lobby");
    room.send({ text: "queued" });
    WebSocket.sockets[0].open();
    WebSocket.sockets[0].receive(at("e1:4"));
    WebSocket.sockets[0].receive(message("e1:5", { from: "ada", text: "five" }));
    WebSocket.sockets[0].drop(1006);
    room.send({ text: "while away" });
    t.mock.timers.tick(100);
    const second = WebSocket.sockets[1];
    assert.equal(second.url.searchParams.get("_h"), "1");
    second.open();
    assert.deepEqual(second.frames, [
      { type: "courier.hello", since: "e1:5", auth: { token: "t1" }, headers: { "x-tenant": "acme" } },
      { text: "while away" },
    ]);
    // The history sends what was published meanwhile, then the channel goes on from there.
    second.receive(at("e1:5"));
    second.receive(message("e1:6", { from: "bob", text: "six" }));
    second.drop(1001);
    t.mock.timers.tick(100);
    WebSocket.sockets[2].open();
    assert.equal(WebSocket.sockets[2].frames[0].since, "e1:6");
    const iterator = room[Symbol.asyncIterator]();
    assert.deepEqual(await next(iterator), { done: false, value: { from: "ada", text: "five" } });
    assert.deepEqual(await next(iterator), { done: false, value: { from: "bob", text: "six" } });
    room.close();
  });

  test("a position kept while unread: the messages stay in the inbox across the reconnection", async (t) => {
    const { WebSocket, caller } = setup(t);
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const room = caller.market.ticks("EURUSD");
    WebSocket.sockets[0].open();
    for (let n = 1; n <= 3; n++) WebSocket.sockets[0].receive(message(`e1:${n}`, n));
    WebSocket.sockets[0].drop(1011);
    t.mock.timers.tick(100);
    WebSocket.sockets[1].open();
    assert.equal(WebSocket.sockets[1].frames[0].since, "e1:3", "not asked again for what the inbox holds");
    WebSocket.sockets[1].receive(message("e1:4", 4));
    const seen = [];
    for await (const value of room) {
      seen.push(value);
      if (value === 4) break;
    }
    assert.deepEqual(seen, [1, 2, 3, 4]);
  });

  for (const [code, reason] of [
    [1001, ""],
    [1005, ""],
    [1006, ""],
    [1011, "upstream failed"],
    [1012, "the topic bus reconnected: messages may have been missed"],
    [1012, "Messages were missed: not courier's spelling"],
    [1013, "subscriber too slow: more than 256 messages buffered"],
  ]) {
    test(`a close with ${code} ${JSON.stringify(reason)} keeps the position`, (t) => {
      const { WebSocket, caller } = setup(t);
      t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
      const room = caller.chat.room("lobby");
      WebSocket.sockets[0].open();
      WebSocket.sockets[0].receive(message("e1:7", "seven"));
      WebSocket.sockets[0].drop(code, reason);
      assert.equal(room.position, "e1:7");
      t.mock.timers.tick(100);
      WebSocket.sockets[1].open();
      assert.deepEqual(WebSocket.sockets[1].frames, [{ type: "courier.hello", since: "e1:7" }]);
      room.close();
    });
  }

  test("a heartbeat gone unanswered keeps the position", (t) => {
    const { WebSocket, caller } = setup(t, { ws: { heartbeat: { intervalMs: 1000, timeoutMs: 300 } } });
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const room = caller.chat.room("lobby");
    WebSocket.sockets[0].open();
    WebSocket.sockets[0].receive(at("e1:2"));
    t.mock.timers.tick(1000);
    t.mock.timers.tick(300);
    assert.deepEqual(WebSocket.sockets[0].closedWith, { code: 1000, reason: "heartbeat unanswered" });
    assert.equal(room.state, "reconnecting");
    t.mock.timers.tick(100);
    WebSocket.sockets[1].open();
    assert.deepEqual(WebSocket.sockets[1].frames[0], { type: "courier.hello", since: "e1:2" });
    room.close();
  });

  test("1012 `messages were missed: …` forgets the position and reconnects with backoff, `since: null`", async (t) => {
    const { WebSocket, caller } = setup(t, { ws: { auth: { token: "t1" } } });
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const room = caller.chat.room("lobby");
    const seen = [];
    room.onState((state) => seen.push({ state, position: room.position }));
    WebSocket.sockets[0].open();
    WebSocket.sockets[0].receive(at("e1:0"));
    WebSocket.sockets[0].receive(message("e1:1", "one"));
    WebSocket.sockets[0].drop(1006);
    t.mock.timers.tick(100);
    WebSocket.sockets[1].open();
    assert.equal(WebSocket.sockets[1].frames[0].since, "e1:1");
    // The server restarted: its history, and the epoch of e1:1, are gone.
    WebSocket.sockets[1].drop(1012, "messages were missed: the history no longer holds e1:1");
    assert.equal(room.position, null);
    assert.deepEqual(seen.at(-1), { state: "reconnecting", position: null }, "forgotten before `onState` hears of it");
    t.mock.timers.tick(199);
    assert.equal(WebSocket.sockets.length, 2, "the backoff of any reconnection");
    t.mock.timers.tick(1);
    const third = WebSocket.sockets[2];
    third.open();
    assert.deepEqual(third.frames, [{ type: "courier.hello", since: null, auth: { token: "t1" } }]);
    // The new history's position; the channel's on_join brings the page up to date.
    third.receive(at("e2:0"));
    third.receive('{"from":"chat","text":"here is what you missed"}');
    assert.equal(room.position, "e2:0");
    const iterator = room[Symbol.asyncIterator]();
    assert.deepEqual(await next(iterator), { done: false, value: "one" });
    assert.deepEqual(await next(iterator), { done: false, value: { from: "chat", text: "here is what you missed" } });
    third.drop(1006);
    t.mock.timers.tick(100);
    assert.equal(WebSocket.sockets[3].url.searchParams.get("_h"), "1");
    WebSocket.sockets[3].open();
    assert.equal(WebSocket.sockets[3].frames[0].since, "e2:0");
    room.close();
  });

  test("malformed `courier.at` and `courier.message` frames are plain messages, handed on whole; nothing throws", async (t) => {
    const { WebSocket, caller } = setup(t);
    const room = caller.chat.room("lobby");
    const socket = WebSocket.sockets[0];
    socket.open();
    const malformed = [
      { type: "courier.message", data: 1 },
      { type: "courier.message", at: 5, data: 1 },
      { type: "courier.message", at: null, data: 1 },
      { type: "courier.message", at: "e1:1" },
      { type: "courier.message", at: { epoch: "e1" }, data: 1 },
      { type: "courier.at" },
      { type: "courier.at", at: 3 },
      { type: "courier.at", at: ["e1:3"] },
      ["courier.message", "e1:1", 1],
      "courier.at",
      null,
      { type: 7, at: "e1:1", data: 1 },
      { at: "e1:1", data: 1 },
    ];
    for (const frame of malformed) assert.doesNotThrow(() => socket.receive(JSON.stringify(frame)));
    socket.receive(new TextEncoder().encode('{"type":"courier.message","at":"e1:1"}'));
    assert.equal(room.position, null, "none of them gave a position");
    assert.equal(room.state, "open");
    const iterator = room[Symbol.asyncIterator]();
    for (const frame of malformed) assert.deepEqual(await next(iterator), { done: false, value: frame });
    assert.deepEqual(await next(iterator), { done: false, value: { type: "courier.message", at: "e1:1" } });
    socket.receive(message("e1:3", "good"));
    assert.deepEqual(await next(iterator), { done: false, value: "good" });
    assert.equal(room.position, "e1:3");
    room.close();
  });

  test("a position alone is not a delivered message: a socket that gives one and closes with 1011 waits longer each time", (t) => {
    const { WebSocket, caller } = setup(t);
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const room = caller.chat.room("lobby");
    const expectSocketAfter = socketAfter(t, WebSocket);
    for (const wait of [100, 200, 400]) {
      WebSocket.sockets.at(-1).open();
      WebSocket.sockets.at(-1).receive(at("e1:0"));
      WebSocket.sockets.at(-1).drop(1011);
      expectSocketAfter(wait);
    }
    // A message with its position is delivered: the backoff starts over.
    WebSocket.sockets.at(-1).open();
    WebSocket.sockets.at(-1).receive(message("e1:1", "one"));
    WebSocket.sockets.at(-1).drop(1011);
    expectSocketAfter(100);
    room.close();
  });
});

// The wire as the Rust side writes it: `test/wire-vectors.json`, written by courier-core's `wire`
// module (`cargo test -p courier-core wire` keeps it current). The browser package writes the
// same calls and hello frames, reads the same positions and refusals, and takes the same media
// types as JSON.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { ChannelError, HTTPError, createProxyCaller } from "../../dist/index.js";
import { fakeFetch, json } from "../support/fetch.mjs";
import { BASE } from "../support/routes.mjs";
import { fakeWebSocket } from "../support/websocket.mjs";

const vectors = JSON.parse(readFileSync(new URL("../wire-vectors.json", import.meta.url), "utf8"));

/** The member at dotted `path` of `caller`. */
const at = (caller, path) => path.split(".").reduce((member, name) => member[name], caller);

describe("calls: the query and body the Rust proxy caller writes", () => {
  for (const call of vectors.calls) {
    test(call.what, async (t) => {
      const path = `${call.group}.${call.name}`;
      const shape = call.type === "mutation" ? { type: "mutation" } : { type: "query", ...(call.method === "GET" ? { get: true } : {}) };
      const routes = { source: call.source, endpoints: { [path]: shape } };
      const requests = fakeFetch(t, () => json(200, null));
      let group = at(createProxyCaller(routes, { baseUrl: BASE }), call.group);
      if (call.timeoutMs !== null) group = group.with({ timeout: call.timeoutMs });
      await (call.variables === null ? group[call.name]() : group[call.name](call.variables));
      const [request] = requests;
      assert.equal(request.method, call.method);
      assert.equal(request.url.search.slice(1), call.query);
      assert.equal(request.body, call.body);
    });
  }
});

/**
 * What the browser writes for `hello`: the vector's frame when it says `since` (a client that
 * keeps positions, as the browser does); else (a client that keeps none) that frame with
 * `"since":null` after its `type`, which the browser's first connection always sends.
 */
function browserHello(hello) {
  const frame = hello.frame === null ? { type: "courier.hello" } : JSON.parse(hello.frame);
  if (Object.hasOwn(frame, "since")) return hello.frame;
  const { type, ...rest } = frame;
  return JSON.stringify({ type, since: null, ...rest });
}

describe("hello frames: the first frame the Rust channel client writes", () => {
  for (const hello of vectors.hellos) {
    test(hello.what, (t) => {
      const WebSocket = fakeWebSocket(t);
      t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
      const routes = { source: "demo", endpoints: { "chat.room": { transport: "ws", bidirectional: true } } };
      const caller = createProxyCaller(routes, {
        baseUrl: BASE,
        proxyPath: { ws: "/api/ws" },
        headers: hello.headers,
        ws: {
          heartbeat: { intervalMs: 0 },
          backoff: { initialMs: 100, jitter: false },
          ...(hello.auth === null ? {} : { auth: hello.auth }),
        },
      });
      const room = caller.chat.room("lobby");
      const expected = browserHello(hello);
      const since = JSON.parse(expected).since;
      let socket = WebSocket.sockets[0];
      socket.open();
      if (since !== null) {
        // A position is handed back on a reconnection: the server gives it, the socket drops.
        assert.equal(JSON.parse(socket.sent[0]).since, null);
        socket.receive(JSON.stringify({ type: "courier.at", at: since }));
        socket.drop(1006);
        t.mock.timers.tick(100);
        socket = WebSocket.sockets[1];
        socket.open();
      }
      assert.deepEqual(socket.sent, [expected]);
      room.close();
    });
  }
});

describe("positions: the server's frames as the Rust channel client reads them", () => {
  for (const vector of vectors.positions) {
    test(vector.what, async (t) => {
      const WebSocket = fakeWebSocket(t);
      const routes = { source: "demo", endpoints: { "chat.room": { transport: "ws", bidirectional: true } } };
      const caller = createProxyCaller(routes, { baseUrl: BASE, proxyPath: { ws: "/api/ws" }, ws: { heartbeat: { intervalMs: 0 } } });
      const room = caller.chat.room("lobby");
      const [socket] = WebSocket.sockets;
      socket.open();
      socket.receive(vector.frame);
      assert.equal(room.position, vector.at);
      // What the frame hands on comes before this; a frame that hands nothing on leaves it first.
      socket.receive('"next"');
      const iterator = room[Symbol.asyncIterator]();
      if (vector.message !== null) assert.deepEqual(await iterator.next(), { done: false, value: vector.message });
      assert.deepEqual(await iterator.next(), { done: false, value: "next" });
      room.close();
    });
  }
});

describe("refusals: the body and the close the Rust proxy writes", () => {
  for (const refusal of vectors.refusals) {
    test(`${refusal.status} ${refusal.code}`, async (t) => {
      fakeFetch(
        t,
        () => new Response(refusal.body, { status: refusal.status, headers: { "content-type": "application/json" } }),
      );
      const routes = { source: "demo", endpoints: { "users.get": { type: "query" } } };
      await assert.rejects(createProxyCaller(routes, { baseUrl: BASE }).users.get(7), (error) => {
        assert.ok(error instanceof HTTPError);
        assert.equal(error.status, refusal.status);
        assert.equal(error.code, refusal.code);
        assert.deepEqual(error.data, { error: { code: refusal.code, message: refusal.message } });
        return true;
      });

      const WebSocket = fakeWebSocket(t);
      t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
      const channels = { source: "demo", endpoints: { "chat.room": { transport: "ws", bidirectional: true } } };
      const room = createProxyCaller(channels, { baseUrl: BASE, proxyPath: { ws: "/api/ws" } }).chat.room("lobby");
      WebSocket.sockets[0].open();
      WebSocket.sockets[0].drop(refusal.close.code, refusal.close.reason);
      await assert.rejects(
        (async () => {
          for await (const message of room) void message;
        })(),
        (error) => {
          assert.ok(error instanceof ChannelError);
          assert.equal(error.kind, "refused");
          assert.equal(error.status, refusal.status);
          assert.equal(error.refusal, refusal.code);
          return true;
        },
      );
    });
  }
});

describe("media types: which content types are JSON", () => {
  for (const { contentType, json: isJson } of vectors.mediaTypes) {
    test(`${contentType}: ${isJson ? "JSON" : "not JSON"}`, async (t) => {
      // A body that is JSON text either way: read as JSON, it is an object; otherwise not.
      fakeFetch(t, () => new Response('{"a":1}', { status: 200, headers: { "content-type": contentType } }));
      const routes = { source: "demo", endpoints: { "users.get": { type: "query" } } };
      const data = await createProxyCaller(routes, { baseUrl: BASE }).users.get(7);
      assert.equal(typeof data === "object" && data !== null && !(data instanceof Blob), isJson, String(data));
    });
  }
});

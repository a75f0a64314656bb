// The wire as the Rust side writes it: `test/wire-vectors.json`, written by courier-core's `wire`
// module (`cargo test -p courier-core wire` keeps it current). The browser package writes the
// same calls and hello frames, reads the same refusals, and takes the same media types as JSON.

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

describe("hello frames: the first frame the Rust channel client writes", () => {
  for (const hello of vectors.hellos) {
    test(hello.what, (t) => {
      const WebSocket = fakeWebSocket(t);
      const routes = { source: "demo", endpoints: { "chat.room": { transport: "ws", bidirectional: true } } };
      const caller = createProxyCaller(routes, {
        baseUrl: BASE,
        proxyPath: { ws: "/api/ws" },
        headers: hello.headers,
        ws: { heartbeat: { intervalMs: 0 }, ...(hello.auth === null ? {} : { auth: hello.auth }) },
      });
      const room = caller.chat.room("lobby");
      const [socket] = WebSocket.sockets;
      socket.open();
      assert.deepEqual(socket.sent, hello.frame === null ? [] : [hello.frame]);
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

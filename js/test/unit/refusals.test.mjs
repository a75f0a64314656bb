// What is refused before anything is sent: variables JSON cannot carry, endpoints the routes
// do not name, channels without a `ws` path, options that cannot work.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigurationError, createProxyCaller } from "../../dist/index.js";
import { fakeFetch, json } from "../support/fetch.mjs";
import { BASE, routes } from "../support/routes.mjs";
import { fakeWebSocket } from "../support/websocket.mjs";

const caller = (options = {}) => createProxyCaller(routes, { baseUrl: BASE, ...options });

function refusedWith(code, path, message) {
  return (error) => {
    assert.ok(error instanceof ConfigurationError, `a ConfigurationError, not ${error}`);
    assert.equal(error.code, code);
    assert.equal(error.path, path);
    if (message !== undefined) assert.equal(error.message, message);
    return true;
  };
}

describe("PROXY_VARIABLE_NOT_SERIALIZABLE", () => {
  const cases = [
    [{ photo: new Blob(["x"]) }, "`users.avatar`: variables.photo is a Blob; files go in a FormData"],
    [{ photo: new File(["x"], "a.png") }, "`users.avatar`: variables.photo is a File; files go in a FormData"],
    [new Blob(["x"]), "`users.avatar`: variables is a Blob; files go in a FormData"],
    [{ files: [{ ok: 1 }, { data: new ArrayBuffer(2) }] }, "`users.avatar`: variables.files[1].data is an ArrayBuffer; files go in a FormData"],
    [{ bytes: new Uint8Array(2) }, "`users.avatar`: variables.bytes is a Uint8Array; files go in a FormData"],
    [{ view: new DataView(new ArrayBuffer(1)) }, "`users.avatar`: variables.view is a DataView; files go in a FormData"],
    [{ "my key": new Float64Array(1) }, '`users.avatar`: variables["my key"] is a Float64Array; files go in a FormData'],
    [{ body: new ReadableStream() }, "`users.avatar`: variables.body is a ReadableStream; files go in a FormData"],
    [{ form: new FormData() }, "`users.avatar`: variables.form is a FormData; a FormData must be the variables themselves"],
  ];
  for (const [variables, message] of cases) {
    test(message, async (t) => {
      const requests = fakeFetch(t);
      await assert.rejects(caller().users.avatar(variables), refusedWith("PROXY_VARIABLE_NOT_SERIALIZABLE", "users.avatar", message));
      assert.equal(requests.length, 0, "nothing sent");
    });
  }

  test("values JSON cannot write: a cycle, a BigInt", async (t) => {
    const requests = fakeFetch(t);
    const cyclic = { a: 1 };
    cyclic.self = cyclic;
    await assert.rejects(caller().users.create(cyclic), refusedWith("PROXY_VARIABLE_NOT_SERIALIZABLE", "users.create"));
    await assert.rejects(caller().users.create({ n: 10n }), refusedWith("PROXY_VARIABLE_NOT_SERIALIZABLE", "users.create"));
    assert.equal(requests.length, 0);
  });

  test("a FormData as the variables, dates and plain values travel", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    const form = new FormData();
    form.append("photo", new Blob(["x"]), "x.png");
    await caller().users.avatar(form);
    await caller().users.create({ at: new Date(0), list: [1, "a", null, { b: true }] });
    assert.equal(requests.length, 2);
    assert.equal(requests[1].body, '{"variables":{"at":"1970-01-01T00:00:00.000Z","list":[1,"a",null,{"b":true}]}}');
  });

  test("streams and channels refuse them at the call, synchronously; and a FormData", (t) => {
    const requests = fakeFetch(t);
    fakeWebSocket(t);
    const c = caller({ proxyPath: { ws: "/api/ws" } });
    assert.throws(() => c.users.events({ b: new Blob([]) }), refusedWith("PROXY_VARIABLE_NOT_SERIALIZABLE", "users.events"));
    assert.throws(() => c.users.events(new FormData()), refusedWith("PROXY_VARIABLE_NOT_SERIALIZABLE", "users.events"));
    assert.throws(() => c.chat.room({ b: new Uint8Array(1) }), refusedWith("PROXY_VARIABLE_NOT_SERIALIZABLE", "chat.room"));
    assert.throws(() => c.chat.room(new FormData()), refusedWith("PROXY_VARIABLE_NOT_SERIALIZABLE", "chat.room"));
    assert.equal(requests.length, 0);
  });
});

describe("ENDPOINT_NOT_IN_ROUTES", () => {
  test("an endpoint or group the routes do not name, reached from JavaScript", async (t) => {
    const requests = fakeFetch(t);
    const c = caller();
    await assert.rejects(
      c.nope.x(),
      refusedWith(
        "ENDPOINT_NOT_IN_ROUTES",
        "nope.x",
        "`nope.x` is not in the routes of source `demo`: mark it `.expose(true)` on the server " +
          "(`expose = true` in courier.toml) and write the routes module again",
      ),
    );
    await assert.rejects(c.users.remove(7), refusedWith("ENDPOINT_NOT_IN_ROUTES", "users.remove"));
    await assert.rejects(c.users.get.deeper(1), refusedWith("ENDPOINT_NOT_IN_ROUTES", "users.get.deeper"));
    await assert.rejects(c.users(), refusedWith("ENDPOINT_NOT_IN_ROUTES", "users"));
    await assert.rejects(c(), refusedWith("ENDPOINT_NOT_IN_ROUTES", ""));
    await assert.rejects(c.raw.nope.x(), refusedWith("ENDPOINT_NOT_IN_ROUTES", "nope.x"));
    assert.equal(requests.length, 0);
  });
});

describe("WS_PATH_NOT_CONFIGURED", () => {
  test("a channel without `proxyPath.ws` throws at the call", (t) => {
    const WebSocket = fakeWebSocket(t);
    assert.throws(
      () => caller().chat.room("lobby"),
      refusedWith("WS_PATH_NOT_CONFIGURED", "chat.room", "`chat.room` is a channel and the proxy caller has no `proxyPath.ws`"),
    );
    assert.equal(WebSocket.sockets.length, 0);
  });
});

describe("INVALID_OPTION", () => {
  test("records that cannot work are refused by createProxyCaller", () => {
    const invalid = { code: "INVALID_OPTION" };
    assert.throws(() => createProxyCaller({ source: "demo", endpoints: { users: { type: "query" } } }), invalid);
    assert.throws(() => createProxyCaller({ source: "demo", endpoints: { "a..b": { type: "query" } } }), invalid);
    assert.throws(() => createProxyCaller({ source: "demo", endpoints: { "a.b": { type: "read" } } }), invalid);
    assert.throws(() => createProxyCaller({ source: "demo", endpoints: { "a.b": { type: "query", transport: "sse" } } }), invalid);
    assert.throws(() => createProxyCaller({ source: "", endpoints: {} }), invalid);
    assert.throws(() => createProxyCaller({ source: "demo" }), invalid);
    assert.throws(() => createProxyCaller(""), invalid);
    assert.throws(() => createProxyCaller(routes, "fast"), invalid);
  });

  test("a `csrf` option that is not two tokens is refused, naming the field", () => {
    const refused = (field) => (error) => {
      assert.ok(error instanceof ConfigurationError);
      assert.equal(error.code, "INVALID_OPTION");
      assert.match(error.message, field);
      return true;
    };
    const csrf = { cookie: "csrf_token", header: "x-csrf-token" };
    for (const [bad, field] of [
      ["x-csrf-token", /`csrf`/],
      [null, /`csrf`/],
      [[], /`csrf`/],
      [{ header: "x-csrf-token" }, /`csrf\.cookie`/],
      [{ ...csrf, cookie: "" }, /`csrf\.cookie`/],
      [{ ...csrf, cookie: "csrf token" }, /`csrf\.cookie`/],
      [{ ...csrf, cookie: "a=b" }, /`csrf\.cookie`/],
      [{ ...csrf, cookie: 7 }, /`csrf\.cookie`/],
      [{ cookie: "csrf_token" }, /`csrf\.header`/],
      [{ ...csrf, header: "" }, /`csrf\.header`/],
      [{ ...csrf, header: "x-csrf:token" }, /`csrf\.header`/],
      [{ ...csrf, header: "x-csrf-token\r\n" }, /`csrf\.header`/],
      [{ ...csrf, header: "x-çsrf" }, /`csrf\.header`/],
    ]) {
      assert.throws(() => createProxyCaller("demo", { csrf: bad }), refused(field), JSON.stringify(bad));
      assert.throws(() => createProxyCaller(routes, { csrf: bad }), refused(field), JSON.stringify(bad));
    }
    createProxyCaller("demo", { csrf: { cookie: "__Host-csrf", header: "X-CSRF-Token" } });
    createProxyCaller("demo", { csrf: undefined });
  });

  test("a ws path that is not http(s) or ws(s)", (t) => {
    fakeWebSocket(t);
    assert.throws(() => caller({ proxyPath: { ws: "ftp://x/ws" } }).chat.room("a"), { code: "INVALID_OPTION" });
  });

  test("`.with()` takes an object", () => {
    assert.throws(() => caller().users.with(5), { code: "INVALID_OPTION" });
  });
});

// The forms of the caller (routes, boundary, name-only) and how the client object behaves.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigurationError, createProxyCaller } from "../../dist/index.js";
import { deferred, fakeFetch, json } from "../support/fetch.mjs";
import { BASE, routes } from "../support/routes.mjs";

const params = (request) => [...request.url.searchParams];

describe("the name-only form", () => {
  test("any `caller.a.b.c(vars)` is endpoint `c` of group `a.b`, always POST", async (t) => {
    const requests = fakeFetch(t, () => json(200, { ok: 1 }));
    const caller = createProxyCaller("demo", { baseUrl: BASE });
    assert.deepEqual(await caller.users.get(7), { ok: 1 });
    await caller.a.b.c({ x: 1 });
    await caller.users.list();
    assert.deepEqual(
      requests.map((r) => [r.method, params(r), r.body]),
      [
        ["POST", [["_s", "demo"], ["_g", "users"], ["_m", "get"]], '{"variables":7}'],
        ["POST", [["_s", "demo"], ["_g", "a.b"], ["_m", "c"]], '{"variables":{"x":1}}'],
        ["POST", [["_s", "demo"], ["_g", "users"], ["_m", "list"]], '{"variables":null}'],
      ],
    );
  });

  test("a path without a group is refused; nothing is coalesced; listed paths cancel", async (t) => {
    const requests = fakeFetch(t, () => new Promise(() => {}));
    const caller = createProxyCaller("demo", { baseUrl: BASE, cancelPrevious: ["users.search"] });
    await assert.rejects(caller.users(), { code: "ENDPOINT_NOT_IN_ROUTES" });
    caller.users.get(1).catch(() => {});
    caller.users.get(1).catch(() => {});
    const older = caller.users.search({ q: "a" });
    caller.users.search({ q: "b" }).catch(() => {});
    await assert.rejects(older, { status: 499 });
    assert.equal(requests.length, 4);
  });

  test("`deduplicate: true` is refused, saying why and what works instead", (t) => {
    const requests = fakeFetch(t);
    assert.throws(
      () => createProxyCaller("demo", { baseUrl: BASE, deduplicate: true }),
      (error) => {
        assert.ok(error instanceof ConfigurationError);
        assert.equal(error.code, "INVALID_OPTION");
        assert.match(error.message, /cannot tell a read from a write/);
        assert.match(error.message, /write is never cancelled/);
        assert.match(error.message, /`cancelPrevious`/);
        assert.match(error.message, /`boundary`/);
        return true;
      },
    );
    assert.throws(() => createProxyCaller("demo", { deduplicate: true, cancelPrevious: ["users.search"] }), {
      code: "INVALID_OPTION",
    });
    createProxyCaller("demo", { baseUrl: BASE, deduplicate: false });
    createProxyCaller("demo", { baseUrl: BASE, deduplicate: undefined });
    assert.equal(requests.length, 0);
  });

  test("raw and with work as in the routes form", async (t) => {
    const requests = fakeFetch(t, () => json(200, 1));
    const caller = createProxyCaller("demo", { baseUrl: BASE });
    const response = await caller.raw.users.with({ timeout: 500 }).get(1);
    assert.equal(response.status, 200);
    assert.equal(response.data, 1);
    assert.equal(requests[0].url.searchParams.get("_t"), "500");
  });
});

describe("the boundary form", () => {
  test("the routes form over the boundary, `source` naming the source", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    const boundary = { ...routes, source: "ignored" };
    const caller = createProxyCaller("demo", { baseUrl: BASE, boundary });
    await caller.users.get(7);
    await caller.users.login({ password: "p" });
    await caller.users.create({});
    assert.deepEqual(
      requests.map((r) => [r.method, r.url.searchParams.get("_s")]),
      [
        ["GET", "demo"],
        ["POST", "demo"],
        ["POST", "demo"],
      ],
    );
    await assert.rejects(caller.users.remove(), { code: "ENDPOINT_NOT_IN_ROUTES" });
    assert.equal(typeof caller.users.events()[Symbol.asyncIterator], "function", "streams are there");
  });

  test("`deduplicate: true` works as in the routes form: reads cancel, writes never", async (t) => {
    const gate = deferred();
    fakeFetch(t, () => gate.promise.then(() => json(200, null)));
    const caller = createProxyCaller("demo", { baseUrl: BASE, boundary: routes, deduplicate: true });
    const older = caller.users.get(1);
    const newer = caller.users.get(2);
    const writes = [caller.users.create({}), caller.users.create({})];
    await assert.rejects(older, { status: 499, code: "CANCELLED" });
    gate.resolve();
    await Promise.all([newer, ...writes]);
    const routed = createProxyCaller(routes, { baseUrl: BASE, deduplicate: true });
    assert.equal(typeof routed.users.get, "function", "the routes form takes it too");
  });
});

describe("the client object", () => {
  test("members are stable, `in` knows the routed names, awaiting a group is harmless", async (t) => {
    const requests = fakeFetch(t);
    const caller = createProxyCaller(routes, { baseUrl: BASE });
    assert.equal(caller.users, caller.users);
    assert.equal(caller.users.get, caller.users.get);
    assert.equal(caller.users.raw, caller.users.raw);
    assert.equal(caller.users.raw.raw, caller.users.raw);
    assert.ok("users" in caller);
    assert.ok("get" in caller.users);
    assert.ok("raw" in caller.users && "with" in caller.users);
    assert.ok(!("nope" in caller.users));
    assert.equal(await caller.users, caller.users, "no `then`");
    assert.equal(caller.users.then, undefined);
    assert.equal(typeof caller.users.toString, "function");
    assert.equal(typeof String(caller.users), "string");
    assert.equal(JSON.stringify({ c: caller.users }), "{}");
    assert.equal(requests.length, 0, "none of that called anything");
  });

  test("a member both an endpoint and a group", async (t) => {
    const requests = fakeFetch(t, () => json(200, ["ada"]));
    const caller = createProxyCaller(routes, { baseUrl: BASE });
    assert.deepEqual(await caller.chat.room.members("lobby"), ["ada"]);
    assert.deepEqual(params(requests[0]), [
      ["_s", "demo"],
      ["_g", "chat.room"],
      ["_m", "members"],
    ]);
  });

  test("routed names shadow Function.prototype's", async (t) => {
    const requests = fakeFetch(t, () => json(200, "called"));
    const caller = createProxyCaller(
      { source: "s", endpoints: { "fn.call": { type: "query" }, "fn.name": { type: "mutation" }, "fn.then": { type: "query" } } },
      { baseUrl: BASE },
    );
    assert.equal(await caller.fn.call(), "called");
    assert.equal(await caller.fn.name(), "called");
    assert.equal(await caller.fn.then(), "called");
    assert.deepEqual(
      requests.map((r) => r.url.searchParams.get("_m")),
      ["call", "name", "then"],
    );
  });
});

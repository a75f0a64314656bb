// Calls in flight: coalescing identical reads, cancel-previous, deduplicate.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { HTTPError, createProxyCaller } from "../../dist/index.js";
import { deferred, fakeFetch, flush, json } from "../support/fetch.mjs";
import { BASE, routes } from "../support/routes.mjs";

const caller = (options = {}) => createProxyCaller(routes, { baseUrl: BASE, ...options });

/** A fake fetch whose answers wait for `gate`. */
function gated(t, body = (request) => ({ v: request.url.searchParams.get("_v") ?? request.body })) {
  const gate = deferred();
  const requests = fakeFetch(t, (request) => gate.promise.then(() => json(200, body(request), { "x-n": "1" })));
  return { gate, requests };
}

describe("coalescing", () => {
  test("identical reads in flight make one request; each call gets its own copy", async (t) => {
    const { gate, requests } = gated(t, () => ({ list: [1] }));
    const c = caller();
    const a = c.users.get(7);
    const b = c.users.get(7);
    const raw = c.users.raw.get(7);
    await flush();
    assert.equal(requests.length, 1);
    gate.resolve();
    const [first, second, whole] = await Promise.all([a, b, raw]);
    assert.deepEqual(first, { list: [1] });
    assert.deepEqual(second, { list: [1] });
    assert.notEqual(first, second, "no shared mutable value");
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get("x-n"), "1");
    assert.deepEqual(whole.data, { list: [1] });
  });

  test("POST reads coalesce too, by their bodies", async (t) => {
    const { gate, requests } = gated(t, (request) => request.body);
    const c = caller();
    const calls = [c.chat.room.members("lobby"), c.chat.room.members("lobby"), c.chat.room.members("hall")];
    await flush();
    assert.deepEqual(
      requests.map((r) => [r.method, r.body]),
      [
        ["POST", '{"variables":"lobby"}'],
        ["POST", '{"variables":"hall"}'],
      ],
    );
    gate.resolve();
    assert.deepEqual(await Promise.all(calls), ['{"variables":"lobby"}', '{"variables":"lobby"}', '{"variables":"hall"}']);
  });

  test("writes are never shared", async (t) => {
    const { gate, requests } = gated(t);
    const c = caller();
    const calls = [c.users.create({ name: "a" }), c.users.create({ name: "a" })];
    await flush();
    assert.equal(requests.length, 2);
    gate.resolve();
    await Promise.all(calls);
  });

  test("different variables, headers, credentials or verbs are different requests", async (t) => {
    const { gate, requests } = gated(t);
    const c = caller();
    const calls = [
      c.users.get(1),
      c.users.get(2),
      c.users.with({ headers: { "x-a": "1" } }).get(1),
      c.users.with({ headers: { "x-a": "2" } }).get(1),
      c.users.with({ credentials: "omit" }).get(1),
      c.users.with({ method: "POST" }).get(1),
    ];
    await flush();
    assert.equal(requests.length, 6);
    gate.resolve();
    await Promise.all(calls);
  });

  test("same headers given in another case or order are the same request", async (t) => {
    const { gate, requests } = gated(t);
    const c = caller();
    const calls = [
      c.users.with({ headers: { "X-A": "1", "x-b": "2" } }).get(1),
      c.users.with({ headers: { "x-b": "2", "x-a": "1" } }).get(1),
    ];
    await flush();
    assert.equal(requests.length, 1);
    gate.resolve();
    await Promise.all(calls);
  });

  test("off by the caller's option, the record's, or the call's", async (t) => {
    const { gate, requests } = gated(t);
    const calls = [];
    const off = caller({ coalesce: false });
    calls.push(off.users.get(1), off.users.get(1));
    const record = createProxyCaller({ ...routes, coalesce: false }, { baseUrl: BASE });
    calls.push(record.users.get(2), record.users.get(2));
    const on = caller();
    calls.push(on.users.get(3), on.users.with({ coalesce: false }).get(3));
    await flush();
    assert.equal(requests.length, 6);
    gate.resolve();
    await Promise.all(calls);
  });

  test("a finished request is not shared with a later call", async (t) => {
    const requests = fakeFetch(t, () => json(200, 1));
    const c = caller();
    await c.users.get(1);
    await c.users.get(1);
    assert.equal(requests.length, 2);
  });

  test("one waiter leaving (its signal) does not abort the request the others wait on", async (t) => {
    const { gate, requests } = gated(t, () => "done");
    const c = caller();
    const controller = new AbortController();
    const leaving = c.users.with({ signal: controller.signal }).get(1);
    const staying = c.users.get(1);
    await flush();
    controller.abort();
    await assert.rejects(leaving, { name: "AbortError" });
    assert.equal(requests.length, 1);
    assert.equal(requests[0].signal.aborted, false);
    gate.resolve();
    assert.equal(await staying, "done");
  });

  test("when every waiter left, the request is aborted and no longer shared", async (t) => {
    const { gate, requests } = gated(t, () => "late");
    const c = caller();
    const controller = new AbortController();
    const only = c.users.with({ signal: controller.signal }).get(1);
    await flush();
    controller.abort();
    await assert.rejects(only, { name: "AbortError" });
    assert.equal(requests[0].signal.aborted, true);
    const next = c.users.get(1);
    await flush();
    assert.equal(requests.length, 2, "a new request, not the aborted one");
    gate.resolve();
    assert.equal(await next, "late");
  });
});

describe("cancel-previous", () => {
  test("a newer read of a listed endpoint cancels the older: 499 CANCELLED, request aborted", async (t) => {
    const { gate, requests } = gated(t);
    const errors = [];
    const c = caller({ onError: (e) => errors.push(e) });
    const older = c.users.search({ q: "a" });
    await flush();
    const newer = c.users.search({ q: "ab" });
    await assert.rejects(older, (error) => {
      assert.ok(error instanceof HTTPError);
      assert.equal(error.status, 499);
      assert.equal(error.code, "CANCELLED");
      assert.equal(error.path, "users.search");
      return true;
    });
    await flush();
    assert.equal(requests.length, 2);
    assert.equal(requests[0].signal.aborted, true);
    assert.equal(requests[1].signal.aborted, false);
    gate.resolve();
    assert.deepEqual(await newer, { v: '{"variables":{"q":"ab"}}' });
    assert.deepEqual(errors.map((e) => e.status), [499]);
  });

  test("a cancelled call sharing its request with the newer one does not abort it", async (t) => {
    const { gate, requests } = gated(t, () => "shared");
    const c = caller();
    const older = c.users.search({ q: "a" });
    const newer = c.users.search({ q: "a" });
    await assert.rejects(older, { status: 499 });
    await flush();
    assert.equal(requests.length, 1);
    assert.equal(requests[0].signal.aborted, false);
    gate.resolve();
    assert.equal(await newer, "shared");
  });

  test("options.cancelPrevious replaces the record's; writes are never cancelled", async (t) => {
    const { gate, requests } = gated(t);
    const c = caller({ cancelPrevious: ["users.create", "users.get"] });
    const w1 = c.users.create({ n: 1 });
    const w2 = c.users.create({ n: 2 });
    const s1 = c.users.search({ q: "1" });
    const s2 = c.users.search({ q: "2" });
    const g1 = c.users.get(1);
    const g2 = c.users.get(2);
    await assert.rejects(g1, { status: 499 });
    await flush();
    assert.equal(requests.length, 6);
    gate.resolve();
    await Promise.all([w1, w2, s1, s2, g2]);
  });

  test("deduplicate: every read cancels its endpoint's earlier call, whatever its variables", async (t) => {
    const { gate } = gated(t);
    const c = caller({ deduplicate: true });
    const g1 = c.users.get(1);
    const g2 = c.users.get(2);
    const other = c.users.list();
    const w1 = c.users.create({});
    const w2 = c.users.create({});
    await assert.rejects(g1, { status: 499 });
    gate.resolve();
    await Promise.all([g2, other, w1, w2]);
  });

  test("without deduplicate, unlisted reads run side by side", async (t) => {
    const { gate } = gated(t);
    const c = caller();
    const calls = [c.users.get(1), c.users.get(2)];
    gate.resolve();
    await Promise.all(calls);
  });

  test("a finished call is not cancelled by a later one", async (t) => {
    fakeFetch(t, () => json(200, 1));
    const c = caller();
    assert.equal(await c.users.search({ q: "a" }), 1);
    assert.equal(await c.users.search({ q: "b" }), 1);
  });
});

// HTTP calls: GET or POST, the address and body, per-call options, responses and errors.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigurationError, HTTPError, createProxyCaller } from "../../dist/index.js";
import { deferred, fakeFetch, flush, json } from "../support/fetch.mjs";
import { BASE, routes } from "../support/routes.mjs";

const caller = (options = {}) => createProxyCaller(routes, { baseUrl: BASE, ...options });

/** The search parameters of a request, in order. */
const params = (request) => [...request.url.searchParams];

describe("GET or POST", () => {
  test("a read whose route says `get: true` goes as GET, its variables as JSON in `_v`", async (t) => {
    const requests = fakeFetch(t, () => json(200, { id: 7, name: "Ada" }));
    const user = await caller().users.get(7);
    assert.deepEqual(user, { id: 7, name: "Ada" });
    const [request] = requests;
    assert.equal(request.method, "GET");
    assert.equal(request.url.origin + request.url.pathname, `${BASE}/api/request`);
    assert.deepEqual(params(request), [
      ["_s", "demo"],
      ["_g", "users"],
      ["_m", "get"],
      ["_v", "7"],
    ]);
    assert.equal(request.body, null);
    assert.equal(request.headers.get("content-type"), null);
  });

  test("no variables: no `_v`", async (t) => {
    const requests = fakeFetch(t, () => json(200, []));
    await caller().users.list();
    await caller().users.list(null);
    for (const request of requests) {
      assert.equal(request.method, "GET");
      assert.deepEqual(params(request), [
        ["_s", "demo"],
        ["_g", "users"],
        ["_m", "list"],
      ]);
    }
  });

  test("a nested group's path is `_g`, dotted", async (t) => {
    const requests = fakeFetch(t, () => json(200, { total: 3 }));
    await caller().admin.reports.daily.get({ day: "2024-01-01" });
    assert.deepEqual(params(requests[0]), [
      ["_s", "demo"],
      ["_g", "admin.reports.daily"],
      ["_m", "get"],
      ["_v", '{"day":"2024-01-01"}'],
    ]);
  });

  test("a read without `get: true` goes as POST with `{\"variables\": …}`", async (t) => {
    const requests = fakeFetch(t, () => json(200, []));
    await caller().users.search({ q: "ada" });
    const [request] = requests;
    assert.equal(request.method, "POST");
    assert.deepEqual(params(request), [
      ["_s", "demo"],
      ["_g", "users"],
      ["_m", "search"],
    ]);
    assert.equal(request.body, '{"variables":{"q":"ada"}}');
    assert.equal(request.headers.get("content-type"), "application/json");
  });

  test('a write without variables sends exactly `{"variables":null}`', async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    await caller().users.create();
    await caller().users.create(null);
    await caller().users.create(undefined);
    for (const request of requests) {
      assert.equal(request.method, "POST");
      assert.equal(request.body, '{"variables":null}');
    }
  });

  test("a sensitive read never goes as GET", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    await caller().users.login({ password: "hunter2" });
    assert.equal(requests[0].method, "POST");
    assert.ok(!requests[0].url.href.includes("hunter2"), "no variables in the address");
  });

  test("the address may be 2048 characters as GET; one more goes as POST", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    const address = (text) => {
      const url = new URL("/api/request", BASE);
      for (const [k, v] of [["_s", "demo"], ["_g", "users"], ["_m", "get"], ["_v", JSON.stringify(text)]]) {
        url.searchParams.append(k, v);
      }
      return url.href.length;
    };
    let text = "";
    while (address(text) < 2048) text += "a";
    assert.equal(address(text), 2048);
    await caller().users.get(text);
    await caller().users.get(`${text}a`);
    assert.equal(requests[0].method, "GET");
    assert.equal(requests[0].url.href.length, 2048);
    assert.equal(requests[1].method, "POST");
    assert.equal(requests[1].body, JSON.stringify({ variables: `${text}a` }));
    assert.ok(!requests[1].url.searchParams.has("_v"));
  });

  test("`.with({ method })` forces the verb, even past 2 KB; other methods are INVALID_OPTION", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    await caller().users.with({ method: "POST" }).get(7);
    await caller().users.with({ method: "GET" }).create({ name: "Ada" });
    await caller().users.with({ method: "GET" }).search({ q: "x".repeat(3000) });
    await caller().users.with({ method: "post" }).get(8);
    assert.deepEqual(
      requests.map((r) => r.method),
      ["POST", "GET", "GET", "POST"],
    );
    assert.equal(requests[0].body, '{"variables":7}');
    assert.equal(requests[1].url.searchParams.get("_v"), '{"name":"Ada"}');
    assert.ok(requests[2].url.href.length > 3000);
    await assert.rejects(caller().users.with({ method: "PUT" }).get(7), (error) => {
      assert.ok(error instanceof ConfigurationError);
      assert.equal(error.code, "INVALID_OPTION");
      assert.equal(error.path, "users.get");
      return true;
    });
    assert.equal(requests.length, 4, "nothing sent");
  });

  test("a FormData goes as POST as it is, the browser writing its content type", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    const form = new FormData();
    form.append("id", "5");
    form.append("photo", new Blob(["png"], { type: "image/png" }), "beach.png");
    await caller({ headers: { "content-type": "text/plain" } }).users.get(form);
    const [request] = requests;
    assert.equal(request.method, "POST");
    assert.equal(request.body, form);
    assert.equal(request.headers.get("content-type"), null);
    await assert.rejects(caller().users.with({ method: "GET" }).get(form), { code: "INVALID_OPTION" });
  });

  test("a FormData's text fields go before its files, each kind in its own order", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    const form = new FormData();
    form.append("photo", new Blob(["png"], { type: "image/png" }), "beach.png");
    form.append("id", "5");
    form.append("scan", new Blob(["pdf"]), "scan.pdf");
    form.append("title", "Holiday");
    await caller().users.get(form);
    const sent = requests[0].body;
    assert.notEqual(sent, form, "the caller's own form is left as it was");
    const entries = [...sent.entries()].map(([name, value]) =>
      typeof value === "string" ? [name, value] : [name, value.name, value.size],
    );
    assert.deepEqual(entries, [
      ["id", "5"],
      ["title", "Holiday"],
      ["photo", "beach.png", 3],
      ["scan", "scan.pdf", 3],
    ]);
    assert.equal([...form.keys()][0], "photo");
  });
});

describe("timeouts", () => {
  test("a call's own timeout is sent as `_t` (before `_v`); the caller's is not", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    await caller({ timeout: 9000 }).users.with({ timeout: 1500 }).get(7);
    await caller({ timeout: 9000 }).users.get(7);
    assert.deepEqual(params(requests[0]), [
      ["_s", "demo"],
      ["_g", "users"],
      ["_m", "get"],
      ["_t", "1500"],
      ["_v", "7"],
    ]);
    assert.ok(!requests[1].url.searchParams.has("_t"));
  });

  test("past the caller's timeout: HTTPError status 0, code TIMEOUT, the request aborted", async (t) => {
    const requests = fakeFetch(t, () => new Promise(() => {}));
    const errors = [];
    const started = Date.now();
    await assert.rejects(caller({ timeout: 30, onError: (e) => errors.push(e) }).users.get(7), (error) => {
      assert.ok(error instanceof HTTPError);
      assert.equal(error.status, 0);
      assert.equal(error.code, "TIMEOUT");
      assert.deepEqual(Object.keys(error.data), ["error"]);
      assert.equal(error.path, "users.get");
      return true;
    });
    assert.ok(Date.now() - started >= 25);
    assert.equal(errors.length, 1);
    assert.ok(requests[0].signal.aborted);
  });

  test("the call's timeout bounds the local wait too", async (t) => {
    fakeFetch(t, () => new Promise(() => {}));
    await assert.rejects(caller().users.with({ timeout: 20 }).get(7), { status: 0, code: "TIMEOUT" });
  });

  test("a timeout that is not a positive number is INVALID_OPTION", async (t) => {
    fakeFetch(t);
    assert.throws(() => caller({ timeout: -1 }), { code: "INVALID_OPTION" });
    assert.throws(() => caller({ timeout: "5" }), { code: "INVALID_OPTION" });
    await assert.rejects(caller().users.with({ timeout: 0 }).get(7), { code: "INVALID_OPTION" });
  });
});

describe("errors and hooks", () => {
  test("a network failure: HTTPError status 0, code NETWORK, the cause kept", async (t) => {
    const cause = new TypeError("fetch failed");
    fakeFetch(t, () => Promise.reject(cause));
    const errors = [];
    await assert.rejects(caller({ onError: (e) => errors.push(e) }).users.get(7), (error) => {
      assert.ok(error instanceof HTTPError);
      assert.equal(error.status, 0);
      assert.equal(error.code, "NETWORK");
      assert.equal(error.data.error.message, "fetch failed");
      assert.equal(error.cause, cause);
      return true;
    });
    assert.equal(errors.length, 1);
  });

  test("a status ≥ 400: HTTPError with status, headers and parsed data; `code` reads the proxy's", async (t) => {
    fakeFetch(t, () =>
      json(404, { error: { code: "ENDPOINT_NOT_IN_ROUTES", message: "`users.get` is not exposed" } }, { "x-request-id": "r1" }),
    );
    const errors = [];
    await assert.rejects(caller({ onError: (e) => errors.push(e) }).users.get(7), (error) => {
      assert.ok(error instanceof HTTPError);
      assert.equal(error.status, 404);
      assert.equal(error.headers.get("x-request-id"), "r1");
      assert.equal(error.code, "ENDPOINT_NOT_IN_ROUTES");
      assert.deepEqual(error.data, { error: { code: "ENDPOINT_NOT_IN_ROUTES", message: "`users.get` is not exposed" } });
      assert.match(error.message, /users\.get.*404.*ENDPOINT_NOT_IN_ROUTES/);
      return true;
    });
    assert.deepEqual(errors.map((e) => e.status), [404]);
  });

  test("an upstream's error body of another shape: `code` is undefined, data as parsed", async (t) => {
    fakeFetch(t, (request) =>
      request.url.searchParams.get("_v") === "1"
        ? new Response("teapot", { status: 418, headers: { "content-type": "text/plain" } })
        : new Response("{not json", { status: 500, headers: { "content-type": "application/json" } }),
    );
    await assert.rejects(caller().users.get(1), (error) => error.status === 418 && error.data === "teapot" && error.code === undefined);
    await assert.rejects(caller().users.get(2), (error) => error.status === 500 && error.data === "{not json");
  });

  test("onSuccess sees the data of every successful call", async (t) => {
    fakeFetch(t, () => json(200, { ok: true }));
    const seen = [];
    const c = caller({ onSuccess: (data) => seen.push(data) });
    await c.users.get(1);
    await c.users.raw.get(2);
    assert.deepEqual(seen, [{ ok: true }, { ok: true }]);
  });

  test("a hook that throws or rejects does not change the call; it is reported", async (t) => {
    fakeFetch(t, (request) => (request.url.searchParams.get("_v") === "1" ? json(200, 1) : json(500, null)));
    const reported = t.mock.method(console, "error", () => {});
    const c = caller({
      onSuccess: () => {
        throw new Error("boom");
      },
      onError: () => Promise.reject(new Error("async boom")),
    });
    assert.equal(await c.users.get(1), 1);
    await assert.rejects(c.users.get(2), { status: 500 });
    await flush();
    assert.equal(reported.mock.callCount(), 2);
    assert.match(String(reported.mock.calls[0].arguments[0]), /onSuccess/);
    assert.match(String(reported.mock.calls[1].arguments[0]), /onError/);
  });

  test("the call's signal rejects with its reason, not an HTTPError, and aborts the request", async (t) => {
    const requests = fakeFetch(t, () => new Promise(() => {}));
    const errors = [];
    const controller = new AbortController();
    const call = caller({ onError: (e) => errors.push(e) }).users.with({ signal: controller.signal }).get(7);
    await flush();
    controller.abort();
    await assert.rejects(call, (error) => error.name === "AbortError" && !(error instanceof HTTPError));
    assert.ok(requests[0].signal.aborted);
    assert.equal(errors.length, 0);
    const reason = new Error("gone");
    await assert.rejects(caller().users.with({ signal: AbortSignal.abort(reason) }).get(7), (error) => error === reason);
    assert.equal(requests.length, 1, "an aborted signal sends nothing");
  });
});

describe("responses", () => {
  const answer = (response) => async (t) => {
    fakeFetch(t, () => response());
    return caller().users.get(1);
  };

  test("204 and empty bodies are null", async (t) => {
    assert.equal(await answer(() => new Response(null, { status: 204 }))(t), null);
    assert.equal(await answer(() => new Response("", { status: 200, headers: { "content-type": "application/json" } }))(t), null);
  });

  test("JSON by `application/json`, `*+json`, or no content type", async (t) => {
    assert.deepEqual(await answer(() => json(200, { a: 1 }))(t), { a: 1 });
    assert.deepEqual(
      await answer(() => new Response('{"b":2}', { headers: { "content-type": "application/problem+json; charset=utf-8" } }))(t),
      { b: 2 },
    );
    const bare = () => {
      const response = new Response(new TextEncoder().encode("[1,2]"));
      response.headers.delete("content-type");
      return response;
    };
    assert.deepEqual(await answer(bare)(t), [1, 2]);
  });

  test("a body without content type that is not JSON is its text", async (t) => {
    const bare = () => {
      const response = new Response(new TextEncoder().encode("OK"));
      response.headers.delete("content-type");
      return response;
    };
    assert.equal(await answer(bare)(t), "OK");
  });

  test("a body that says JSON and is not rejects with SyntaxError (no onError)", async (t) => {
    fakeFetch(t, () => new Response("{oops", { headers: { "content-type": "application/json" } }));
    let hooked = 0;
    await assert.rejects(createProxyCaller(routes, { baseUrl: BASE, onError: () => hooked++ }).users.get(1), SyntaxError);
    assert.equal(hooked, 0);
  });

  test("text/* is a string, decoded by its charset", async (t) => {
    assert.equal(await answer(() => new Response("héllo", { headers: { "content-type": "text/plain; charset=utf-8" } }))(t), "héllo");
    const latin1 = new Uint8Array([0x63, 0x61, 0x66, 0xe9]);
    assert.equal(await answer(() => new Response(latin1, { headers: { "content-type": "text/plain; charset=iso-8859-1" } }))(t), "café");
  });

  test("a URL-encoded form is an object, as courier reads a query", async (t) => {
    const form = () =>
      new Response("a=1&tags=x&tags=y&filter%5Bname%5D=z&ids%5B%5D=9&sp=a+b&__proto__=p", {
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
    const value = await answer(form)(t);
    assert.deepEqual({ ...value }, { a: "1", tags: ["x", "y"], filter: { name: "z" }, ids: ["9"], sp: "a b", ["__proto__"]: "p" });
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
  });

  test("anything else is a Blob of its type", async (t) => {
    const value = await answer(() => new Response(new Uint8Array([1, 2, 3]), { headers: { "content-type": "image/png" } }))(t);
    assert.ok(value instanceof Blob);
    assert.equal(value.type, "image/png");
    assert.deepEqual([...new Uint8Array(await value.arrayBuffer())], [1, 2, 3]);
  });

  test("`.raw` resolves to status, headers and data, on any group and chained with `.with`", async (t) => {
    const requests = fakeFetch(t, () => json(201, { id: 1 }, { "x-a": "b" }));
    const c = caller();
    for (const call of [
      () => c.users.raw.get(1),
      () => c.raw.users.get(1),
      () => c.users.with({ headers: { "x-1": "1" } }).raw.get(1),
      () => c.raw.users.with({ headers: { "x-1": "1" } }).get(1),
      () => c.raw.raw.users.get(1),
    ]) {
      const response = await call();
      assert.equal(response.status, 201);
      assert.ok(response.headers instanceof Headers);
      assert.equal(response.headers.get("x-a"), "b");
      assert.deepEqual(response.data, { id: 1 });
    }
    assert.equal(requests[2].headers.get("x-1"), "1");
    assert.equal(requests[3].headers.get("x-1"), "1");
    assert.deepEqual(await c.with({}).users.get(1), { id: 1 });
  });
});

describe("headers, credentials, CSRF", () => {
  test("the call's headers merge over the caller's, a name given again replaced", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    const c = caller({ headers: { "X-Tenant": "acme", "x-keep": "1" } });
    await c.users.with({ headers: { "x-tenant": "other" } }).with({ headers: { "x-more": "2" } }).get(1);
    const headers = requests[0].headers;
    assert.equal(headers.get("x-tenant"), "other");
    assert.equal(headers.get("x-keep"), "1");
    assert.equal(headers.get("x-more"), "2");
  });

  test('credentials default to "include"; a call may set its own', async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    await caller().users.get(1);
    await caller({ credentials: "same-origin" }).users.get(1);
    await caller().users.with({ credentials: "omit" }).get(1);
    assert.deepEqual(
      requests.map((r) => r.credentials),
      ["include", "same-origin", "omit"],
    );
  });

  test("the session's CSRF cookie goes in its header on every POST, not on GET", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    globalThis.document = { cookie: "theme=dark; csrf_token=a%20b%2Bc; other=1" };
    t.after(() => {
      delete globalThis.document;
    });
    const c = caller();
    await c.users.create({ name: "Ada" });
    await c.users.search({ q: "a" });
    await c.users.get(1);
    await c.users.with({ headers: { "x-csrf-token": "mine" } }).create({});
    assert.equal(requests[0].headers.get("x-csrf-token"), "a b+c");
    assert.equal(requests[1].headers.get("x-csrf-token"), "a b+c");
    assert.equal(requests[2].headers.get("x-csrf-token"), null);
    assert.equal(requests[3].headers.get("x-csrf-token"), "mine");
  });

  test("no document, or no such cookie: no CSRF header", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    await caller().users.create({});
    globalThis.document = { cookie: "theme=dark" };
    t.after(() => {
      delete globalThis.document;
    });
    await caller().users.create({});
    assert.equal(requests[0].headers.get("x-csrf-token"), null);
    assert.equal(requests[1].headers.get("x-csrf-token"), null);
  });
});

describe("the `csrf` option", () => {
  /** A page whose cookies hold `csrf_token` and `xsrf`. */
  function page(t) {
    globalThis.document = { cookie: "csrf_token=from-record; xsrf=t%2B1" };
    t.after(() => {
      delete globalThis.document;
    });
  }

  test("a name-only caller given `csrf` sends the token on a write, none on a GET", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    page(t);
    const c = createProxyCaller("demo", { baseUrl: BASE, csrf: { cookie: "xsrf", header: "x-xsrf" } });
    await c.users.create({ name: "Ada" });
    await c.users.with({ method: "GET" }).get(1);
    await c.users.with({ headers: { "x-xsrf": "mine" } }).create({});
    assert.deepEqual(
      requests.map((r) => [r.method, r.headers.get("x-xsrf")]),
      [
        ["POST", "t+1"],
        ["GET", null],
        ["POST", "mine"],
      ],
    );
  });

  test("a name-only caller without `csrf` sends no token: it has no record to name one", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    page(t);
    await createProxyCaller("demo", { baseUrl: BASE }).users.create({});
    assert.equal(requests[0].headers.get("x-csrf-token"), null);
  });

  test("in the routes and boundary forms it replaces the record's", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    page(t);
    const csrf = { cookie: "xsrf", header: "x-xsrf" };
    await caller({ csrf }).users.create({});
    await createProxyCaller("demo", { baseUrl: BASE, boundary: routes, csrf }).users.create({});
    await createProxyCaller("demo", { baseUrl: BASE, boundary: routes }).users.create({});
    assert.deepEqual(
      requests.map((r) => [r.headers.get("x-xsrf"), r.headers.get("x-csrf-token")]),
      [
        ["t+1", null],
        ["t+1", null],
        [null, "from-record"],
      ],
    );
  });
});

describe("proxy paths", () => {
  test("paths resolve against baseUrl; absolute ones stand; defaults per field", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    await createProxyCaller(routes, { baseUrl: BASE, proxyPath: { http: "/rpc" } }).users.get(1);
    await createProxyCaller(routes, { baseUrl: BASE, proxyPath: { http: "https://api.example/p?x=1" } }).users.get(1);
    assert.equal(requests[0].url.origin + requests[0].url.pathname, `${BASE}/rpc`);
    assert.equal(requests[1].url.origin + requests[1].url.pathname, "https://api.example/p");
    assert.deepEqual(params(requests[1])[0], ["x", "1"]);
  });

  test("relative paths resolve against the page's origin", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    globalThis.location = { origin: "https://page.example", href: "https://page.example/app/" };
    t.after(() => {
      delete globalThis.location;
    });
    await createProxyCaller(routes).users.get(1);
    assert.equal(requests[0].url.origin + requests[0].url.pathname, "https://page.example/api/request");
  });

  test("no page and no baseUrl: a relative path is INVALID_OPTION, nothing sent", async (t) => {
    const requests = fakeFetch(t, () => json(200, null));
    await assert.rejects(createProxyCaller(routes).users.get(1), (error) => {
      assert.ok(error instanceof ConfigurationError);
      assert.equal(error.code, "INVALID_OPTION");
      assert.match(error.message, /baseUrl/);
      return true;
    });
    assert.equal(requests.length, 0);
  });
});

test("each call is its own promise even when answered at once", async (t) => {
  const gate = deferred();
  fakeFetch(t, () => gate.promise.then(() => json(200, 1)));
  const c = caller();
  const a = c.users.get(1);
  const b = c.users.get(1);
  assert.notEqual(a, b);
  gate.resolve();
  assert.deepEqual(await Promise.all([a, b]), [1, 1]);
});

describe("idempotency keys", () => {
  const keyed = { ...routes, endpoints: { ...routes.endpoints, "users.create": { type: "mutation", idempotencyKey: true } } };
  const keyedCaller = (options = {}) => createProxyCaller(keyed, { baseUrl: BASE, ...options });

  test("a write whose route says `idempotencyKey` carries a fresh key per call; others carry none", async (t) => {
    const requests = fakeFetch(t, () => json(201, { id: 1 }));
    await keyedCaller().users.create({ name: "Ada" });
    await keyedCaller().users.create({ name: "Ada" });
    await keyedCaller().users.avatar({ name: "Ada" });
    await keyedCaller().users.search({ q: "ada" });
    const [first, second, avatar, search] = requests.map((r) => r.headers.get("idempotency-key"));
    assert.match(first, /^[0-9a-f]{32}$/);
    assert.match(second, /^[0-9a-f]{32}$/);
    assert.notEqual(first, second, "a key per call");
    assert.equal(avatar, null, "a write whose route does not ask");
    assert.equal(search, null, "a read");
  });

  test("a key the caller set is kept", async (t) => {
    const requests = fakeFetch(t, () => json(201, { id: 1 }));
    await keyedCaller({ headers: { "idempotency-key": "order-41" } }).users.create({ name: "Ada" });
    assert.equal(requests[0].headers.get("idempotency-key"), "order-41");
  });
});

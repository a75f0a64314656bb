// HTTP calls through a real proxy, from a page in Chromium: the verb and the body on the wire,
// coalescing, cancel-previous, timeouts, uploads with progress, the session's cookies and CSRF
// token, the refusals before anything is sent — and what reached the upstream each time.

import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { run, start } from "./harness.mjs";

let fixture;
before(async () => {
  fixture = await start();
});
after(() => fixture?.close());
beforeEach(() => fixture.reset());

/** A fresh page on the app's origin, and every request it sends to the proxy route. */
async function appPage() {
  const page = await fixture.page();
  const sent = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith("/api/")) {
      sent.push({ method: request.method(), url, body: request.postData(), headers: request.headers() });
    }
  });
  return { page, sent };
}

const upstreamCalls = (recorded, path) => recorded.filter((r) => r.path === path);

describe("the verb and the body", () => {
  test("a cached read goes as GET with _v; a write as POST with {variables}", async () => {
    const { page, sent } = await appPage();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes);
      const todo = await caller.todos.get({ id: 1 });
      await caller.account.login({ user: "ada" });
      const created = await caller.todos.create({ title: "from the page" });
      return { todo, created };
    });
    assert.deepEqual(result.todo, { id: 1, title: "write the proxy", done: true });
    assert.equal(result.created.title, "from the page");

    const [get, login, create] = sent;
    assert.equal(get.method, "GET");
    assert.equal(get.url.pathname, "/api/request");
    assert.deepEqual(Object.fromEntries(get.url.searchParams), {
      _s: "demo", _g: "todos", _m: "get", _v: '{"id":1}',
    });
    assert.equal(login.method, "POST");
    assert.equal(create.method, "POST");
    assert.equal(create.url.searchParams.get("_v"), null);
    assert.deepEqual(JSON.parse(create.body), { variables: { title: "from the page" } });

    const recorded = await fixture.recorded();
    assert.equal(upstreamCalls(recorded, "/todos/1")[0].method, "GET");
    assert.equal(upstreamCalls(recorded, "/todos").filter((r) => r.method === "POST").length, 1);
  });

  test("a read that is not cached, a sensitive one and a long one go as POST", async () => {
    const { page, sent } = await appPage();
    const statuses = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes);
      await caller.todos.search({ q: "proxy", delay_ms: 0 });
      await caller.account.check({ password: "hunter2" });
      await caller.debug.wait({ ms: 0, pad: "x".repeat(3000) });
      await caller.debug.wait({ ms: 0 });
      // Forcing GET on a sensitive read: the proxy refuses it.
      try {
        await caller.account.with({ method: "GET" }).check({ password: "hunter2" });
        return "not refused";
      } catch (error) {
        return { status: error.status, code: error.code };
      }
    });
    assert.deepEqual(statuses, { status: 405, code: "METHOD_NOT_ALLOWED" });
    assert.deepEqual(sent.map((s) => s.method), ["POST", "POST", "POST", "GET", "GET"]);
    assert.ok(!sent[1].url.href.includes("hunter2"), "no password in the address");
    assert.ok(sent[2].url.href.length < 2048 && sent[2].body.length > 3000);
    assert.equal(sent[3].url.searchParams.get("_v"), '{"ms":0}');
    // The forced GET never reached the upstream.
    assert.equal(upstreamCalls(await fixture.recorded(), "/account/check").length, 1);
  });

  test("a text answer is a string, raw gives the whole response, default headers cross", async () => {
    const { page } = await appPage();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes, { headers: { "x-tenant": "acme" } });
      const text = await caller.debug.text();
      const raw = await caller.raw.todos.get({ id: 2 });
      const echo = await caller.debug.with({ headers: { "x-tenant": "globex" } }).echo();
      return { text, status: raw.status, type: raw.headers.get("content-type"), data: raw.data, echo };
    });
    assert.equal(result.text, "plain words");
    assert.equal(result.status, 200);
    assert.equal(result.type, "application/json");
    assert.equal(result.data.id, 2);
    assert.equal(result.echo.headers["x-tenant"], "globex");
  });
});

describe("sharing and cancelling", () => {
  test("identical reads in flight reach the proxy and the upstream once", async () => {
    const { page, sent } = await appPage();
    const results = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes);
      return Promise.all([
        caller.debug.wait({ ms: 300 }),
        caller.debug.wait({ ms: 300 }),
        caller.raw.debug.wait({ ms: 300 }),
        caller.debug.with({ coalesce: false }).wait({ ms: 300 }),
      ]);
    });
    assert.deepEqual(results[0], { ms: 300 });
    assert.deepEqual(results[1], { ms: 300 });
    assert.equal(results[2].status, 200);
    assert.equal(sent.length, 2, "three shared one request; the fourth opted out");
    assert.equal(upstreamCalls(await fixture.recorded(), "/debug/wait").length, 2);
  });

  test("a newer search cancels the one in flight with 499; writes are never shared", async () => {
    const { page } = await appPage();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const errors = [];
      const caller = courier.createProxyCaller(routes, { onError: (e) => errors.push(e.status) });
      const first = caller.todos.search({ q: "write", delay_ms: 400 }).then(
        () => "resolved",
        (e) => ({ name: e.name, status: e.status, code: e.code }),
      );
      await new Promise((r) => setTimeout(r, 50));
      const second = await caller.todos.search({ q: "test", delay_ms: 0 });
      await caller.account.login({ user: "ada" });
      const writes = await Promise.all([
        caller.todos.create({ title: "twice" }),
        caller.todos.create({ title: "twice" }),
      ]);
      return { first: await first, second, ids: writes.map((w) => w.id), errors };
    });
    assert.deepEqual(result.first, { name: "HTTPError", status: 499, code: "CANCELLED" });
    assert.deepEqual(result.second.map((t) => t.id), [2]);
    assert.notEqual(result.ids[0], result.ids[1], "two writes, two to-dos");
    assert.deepEqual(result.errors, [499]);
  });

  test("the caller's timeout stays in the browser; a call's own is sent as _t", async () => {
    const { page, sent } = await appPage();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes, { timeout: 200 });
      const outcome = (p) => p.then(() => "resolved", (e) => ({ status: e.status, code: e.code }));
      const local = await outcome(caller.debug.wait({ ms: 1000 }));
      const sentOne = await outcome(caller.debug.with({ timeout: 5000 }).wait({ ms: 10 }));
      return { local, sentOne };
    });
    assert.deepEqual(result.local, { status: 0, code: "TIMEOUT" });
    assert.equal(result.sentOne, "resolved");
    assert.equal(sent[0].url.searchParams.get("_t"), null);
    assert.equal(sent[1].url.searchParams.get("_t"), "5000");
  });

  test("errors: a status from the upstream, and a network failure as status 0, both to onError", async () => {
    const { page } = await appPage();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const seen = [];
      const successes = [];
      const hooks = { onError: (e) => seen.push(e.status), onSuccess: (d) => successes.push(d) };
      const caller = courier.createProxyCaller(routes, hooks);
      const teapot = await caller.debug.teapot().catch((e) => ({ status: e.status, data: e.data }));
      await caller.debug.text();
      const nowhere = courier.createProxyCaller(routes, {
        ...hooks,
        proxyPath: { http: "http://127.0.0.1:9/api/request" },
      });
      const down = await nowhere.debug.text().catch((e) => ({ status: e.status, code: e.code }));
      return { teapot, down, seen, successes };
    });
    assert.deepEqual(result.teapot, {
      status: 418,
      data: { error: { code: "TEAPOT", message: "short and stout" } },
    });
    assert.deepEqual(result.down, { status: 0, code: "NETWORK" });
    assert.deepEqual(result.seen, [418, 0]);
    assert.deepEqual(result.successes, ["plain words"]);
  });
});

describe("refused before anything is sent", () => {
  test("an endpoint not in the routes, a channel without a ws path, a Blob in the variables", async () => {
    const { page, sent } = await appPage();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes);
      const code = async (f) => {
        try {
          await f();
          return "no error";
        } catch (e) {
          return { name: e.name, code: e.code, message: e.message };
        }
      };
      return {
        notRouted: await code(() => caller.admin.purge()),
        noWs: await code(() => caller.live.room("lobby")),
        blob: await code(() => caller.todos.create({ title: new Blob(["x"]) })),
        bytes: await code(() => caller.todos.create({ title: new Uint8Array(4) })),
      };
    });
    assert.equal(result.notRouted.code, "ENDPOINT_NOT_IN_ROUTES");
    assert.equal(result.notRouted.name, "ConfigurationError");
    assert.equal(result.noWs.code, "WS_PATH_NOT_CONFIGURED");
    assert.equal(result.blob.code, "PROXY_VARIABLE_NOT_SERIALIZABLE");
    assert.match(result.blob.message, /variables\.title is a Blob/);
    assert.equal(result.bytes.code, "PROXY_VARIABLE_NOT_SERIALIZABLE");
    assert.equal(sent.length, 0, "nothing reached the proxy");
    assert.equal((await fixture.recorded()).length, 0);
  });
});

describe("uploads", () => {
  test("a FormData with a file goes as multipart through XHR, with progress to 1", async () => {
    const { page, sent } = await appPage();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes);
      await caller.account.login({ user: "ada" });
      const form = new FormData();
      form.append("note", "a field");
      form.append("photo", new Blob([new Uint8Array(400_000)], { type: "image/png" }), "beach.png");
      const progress = [];
      const attached = await caller.todos
        .with({ onUploadProgress: ({ percent }) => progress.push(percent) })
        .attach(form);
      return { attached, progress };
    });
    assert.deepEqual(result.attached.parts, [
      { name: "note", file_name: null, size: 7 },
      { name: "photo", file_name: "beach.png", size: 400_000 },
    ]);
    assert.equal(result.progress.at(-1), 1);
    assert.ok(result.progress.every((p, i, all) => i === 0 || p >= all[i - 1]), "progress only grows");
    const upload = sent.at(-1);
    assert.equal(upload.method, "POST");
    const recorded = upstreamCalls(await fixture.recorded(), "/todos/attach")[0];
    assert.match(recorded.headers["content-type"], /^multipart\/form-data; boundary=/);
  });
});

describe("the session", () => {
  test("the upstream's HttpOnly cookie passes back, stays unreadable, and goes with the next call", async () => {
    const { page } = await appPage();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes);
      const before = await caller.account.me();
      await caller.account.login({ user: "grace" });
      const after = await caller.account.me();
      const omitted = await courier.createProxyCaller(routes, { credentials: "omit" }).account.me();
      return { before, after, omitted, visible: document.cookie };
    });
    assert.deepEqual(result.before, { user: null });
    assert.deepEqual(result.after, { user: "grace" });
    assert.deepEqual(result.omitted, { user: null });
    assert.ok(!result.visible.includes("sid="), "the page cannot read the session cookie");
    assert.match(result.visible, /csrf_token=/);
    const me = upstreamCalls(await fixture.recorded(), "/account/me");
    assert.match(me[1].headers.cookie, /sid=grace\.\d+/);
  });

  test("a write carries the CSRF token by itself; without it the proxy refuses", async () => {
    const { page } = await appPage();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes);
      await caller.account.login({ user: "ada" });
      const allowed = await caller.todos.create({ title: "with the token" });
      document.cookie = "csrf_token=; Max-Age=0; Path=/";
      const refused = await caller.todos.create({ title: "without" }).catch((e) => ({
        status: e.status,
        code: e.code,
      }));
      return { allowed: allowed.title, refused };
    });
    assert.equal(result.allowed, "with the token");
    assert.deepEqual(result.refused, { status: 403, code: "CSRF_CHECK_FAILED" });
    const writes = upstreamCalls(await fixture.recorded(), "/todos").filter((r) => r.method === "POST");
    assert.equal(writes.length, 1, "the refused write never reached the upstream");
  });
});

describe("the alternative forms", () => {
  test("the boundary form reads as GET unless sensitive; the name-only form sends every call as POST", async () => {
    const { page, sent } = await appPage();
    const result = await run(
      page,
      fixture.routes,
      async ({ courier, arg }) => {
        const bounded = courier.createProxyCaller("demo", { boundary: arg.boundary });
        const todo = await bounded.todos.search({ q: "proxy", delay_ms: 0 });
        await bounded.account.check({ password: "hunter2" });
        const named = courier.createProxyCaller("demo");
        const one = await named.todos.get({ id: 2 });
        const list = await named.todos.list();
        return { todo: todo[0].id, one: one.id, listed: list.some((t) => t.id === 2) };
      },
      { boundary: fixture.boundary },
    );
    assert.deepEqual(result, { todo: 1, one: 2, listed: true });
    assert.deepEqual(
      sent.map((s) => `${s.method} ${s.url.searchParams.get("_m")}`),
      ["GET search", "POST check", "POST get", "POST list"],
    );
    assert.deepEqual(JSON.parse(sent[3].body), { variables: null });
  });

  test("the name-only form sends the CSRF token only when its `csrf` option names it: with it a write passes, without it 403", async () => {
    const { page, sent } = await appPage();
    const result = await run(page, fixture.routes, async ({ courier }) => {
      const named = courier.createProxyCaller("demo", { csrf: { cookie: "csrf_token", header: "x-csrf-token" } });
      // Signing in is unguarded: it needs no token, and sets the session's and the token's cookies.
      await named.account.login({ user: "ada" });
      const token = document.cookie.match(/csrf_token=([^;]*)/)?.[1];
      const created = await named.todos.create({ title: "named, with the token" });
      const bare = courier.createProxyCaller("demo");
      const refused = await bare.todos.create({ title: "named, without" }).then(
        () => "not refused",
        (e) => ({ name: e.name, status: e.status, code: e.code }),
      );
      return { token, created: created.title, refused };
    });
    assert.equal(result.created, "named, with the token");
    assert.deepEqual(result.refused, { name: "HTTPError", status: 403, code: "CSRF_CHECK_FAILED" });
    assert.deepEqual(
      sent.map((s) => `${s.method} ${s.url.searchParams.get("_m")}`),
      ["POST login", "POST create", "POST create"],
    );
    assert.ok(result.token, "signed in: the page can read the token");
    assert.equal(sent[1].headers["x-csrf-token"], result.token, "the token in the header the option names");
    assert.equal(sent[2].headers["x-csrf-token"], undefined, "no record, no option: no token");
    const writes = upstreamCalls(await fixture.recorded(), "/todos").filter((r) => r.method === "POST");
    assert.equal(writes.length, 1, "the refused write never reached the upstream");
  });
});

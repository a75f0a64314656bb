// A page on another origin (the fixture's second port: same site, so the browser sends the
// victim's cookies with everything) tries a write, a stream and a socket against the app's
// proxy. Each is refused — and nothing reaches the upstream. The same calls from the app's own
// page succeed, so the refusals are the defences at work, not a broken fixture.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { run, start } from "./harness.mjs";

let fixture;
before(async () => {
  fixture = await start();
});
after(() => fixture?.close());

const WRITE = "/api/request?_s=demo&_g=todos&_m=create";
const STREAM = "/api/sse?_s=demo&_g=live&_m=ticks&_v=" + encodeURIComponent('{"until":3,"per_connection":3}');
const SOCKET = "/api/ws?_s=demo&_g=live&_m=room&_v=%22lobby%22";

describe("a page on another origin, with the victim's cookies", () => {
  test("its write, stream and socket are refused, and nothing reaches the upstream", async () => {
    // The victim signs in on the app: the session and CSRF cookies are in the browser.
    const context = await fixture.browser.newContext();
    const app = await context.newPage();
    await app.goto(fixture.app + "/");
    await run(app, fixture.routes, async ({ courier, routes }) => {
      await courier.createProxyCaller(routes).account.login({ user: "victim" });
    });
    await fixture.reset();

    const hostile = await context.newPage();
    // What the proxy answered each request, as the network saw it (the page may not).
    const answered = [];
    hostile.on("response", (response) => {
      const url = new URL(response.url());
      if (url.pathname.startsWith("/api/")) {
        answered.push(`${response.request().method()} ${url.pathname} ${response.status()}`);
      }
    });
    await hostile.goto(fixture.elsewhere + "/");
    const seen = await hostile.evaluate(
      async ({ app, WRITE, STREAM, SOCKET }) => {
        const outcome = {};
        // The cookies are the victim's: same host, another port — same site.
        outcome.cookiesVisible = document.cookie.includes("csrf_token=");
        const token = document.cookie.match(/csrf_token=([^;]+)/)?.[1] ?? "";

        // A form-shaped write (no preflight), with and without the stolen token in the body.
        const form = new FormData();
        form.append("title", "pwned");
        await fetch(app + WRITE, { method: "POST", mode: "no-cors", credentials: "include", body: form });
        await fetch(app + WRITE, {
          method: "POST",
          mode: "no-cors",
          credentials: "include",
          headers: { "content-type": "text/plain" },
          body: JSON.stringify({ variables: { title: "pwned" } }),
        });
        // A JSON write with the token the page could read: the browser asks first (CORS
        // preflight), the proxy gives no leave, and the write is never sent.
        outcome.preflighted = await fetch(app + WRITE, {
          method: "POST",
          credentials: "include",
          headers: { "content-type": "application/json", "x-csrf-token": token },
          body: JSON.stringify({ variables: { title: "pwned" } }),
        }).then(() => "sent", (e) => e.name);

        // A stream, with credentials.
        outcome.stream = await new Promise((resolve) => {
          const source = new EventSource(app + STREAM, { withCredentials: true });
          source.onmessage = () => {
            source.close();
            resolve("message");
          };
          source.onerror = () => {
            source.close();
            resolve("error");
          };
        });

        // A socket.
        outcome.socket = await new Promise((resolve) => {
          const socket = new WebSocket(app.replace("http", "ws") + SOCKET);
          socket.onopen = () => resolve("open");
          socket.onclose = (e) => resolve(`closed ${e.code}`);
        });
        return outcome;
      },
      { app: fixture.app, WRITE, STREAM, SOCKET },
    );

    assert.equal(seen.cookiesVisible, true, "the attack really has the victim's cookies");
    assert.equal(seen.preflighted, "TypeError");
    assert.equal(seen.stream, "error");
    assert.equal(seen.socket, "closed 1006");
    // The proxy's own refusals of the two writes the browser sent: the form by the session
    // (no CSRF header, a foreign origin), the text/plain one by its content type. (A refused
    // preflight, stream or socket handshake shows to a page only as a failure.)
    assert.deepEqual(answered.sort(), ["POST /api/request 403", "POST /api/request 415"]);
    const recorded = await fixture.recorded();
    assert.deepEqual(
      recorded.map((r) => `${r.method} ${r.path}`),
      [],
      "nothing reached the upstream",
    );
    await context.close();
  });

  test("the same write, stream and socket from the app's own page go through", async () => {
    await fixture.reset();
    const page = await fixture.page();
    const result = await run(page, fixture.routes, async ({ courier, routes }) => {
      const caller = courier.createProxyCaller(routes, { proxyPath: { ws: "/api/ws" } });
      await caller.account.login({ user: "ada" });
      const created = await caller.todos.create({ title: "mine" });
      const ticks = [];
      for await (const event of caller.live.ticks({ until: 3, per_connection: 3 })) ticks.push(event.data.n);
      const room = caller.live.room("lobby");
      await room.opened;
      room.close();
      return { created: created.title, ticks };
    });
    assert.deepEqual(result, { created: "mine", ticks: [1, 2, 3] });
    const paths = (await fixture.recorded()).map((r) => `${r.method} ${r.path}`);
    assert.ok(paths.includes("POST /todos"), paths.join(", "));
    assert.ok(paths.includes("GET /ticks"), paths.join(", "));
  });
});

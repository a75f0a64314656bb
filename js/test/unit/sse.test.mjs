// Streams against a real HTTP server on 127.0.0.1, through node's fetch: events, resuming
// with Last-Event-ID after a drop, and every way a stream ends.

import assert from "node:assert/strict";
import http from "node:http";
import { describe, test } from "node:test";
import { HTTPError, StreamError, createProxyCaller } from "../../dist/index.js";
import { backoff } from "../../dist/sse.js";
import { fakeFetch } from "../support/fetch.mjs";
import { routes } from "../support/routes.mjs";

/** An HTTP server whose `handler(req, res, index)` answers each request; records them. */
async function serve(t, handler) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const index = requests.length;
    requests.push({ url: new URL(req.url, "http://127.0.0.1"), headers: req.headers, at: performance.now(), closed: false });
    req.socket.on("close", () => {
      requests[index].closed = true;
    });
    handler(req, res, index);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  return { base: `http://127.0.0.1:${server.address().port}`, requests };
}

const EVENTS = { "content-type": "text/event-stream", "cache-control": "no-cache" };

/** The event a courier server ends a finite stream with. */
const END = "event: courier.end\ndata: {}\n\n";

/** Writes `text`, then cuts the connection (a dropped stream, not a clean end). */
function writeThenDrop(res, text, onDrop) {
  res.writeHead(200, EVENTS);
  res.write(text, () => {
    setTimeout(() => {
      onDrop?.(performance.now());
      res.socket.destroy();
    }, 10);
  });
}

async function collect(stream) {
  const out = [];
  for await (const event of stream) out.push(event);
  return out;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe("reading a stream", () => {
  test("events parsed from JSON with their id and type; the request's address and headers", async (t) => {
    const { base, requests } = await serve(t, (req, res) => {
      res.writeHead(200, EVENTS);
      res.end(': hello\n\nid: 1\ndata: {"online":true}\n\nevent: renamed\ndata: {"online":false}\n\ndata: 3\n\n' + END);
    });
    const caller = createProxyCaller(routes, { baseUrl: base, headers: { "x-tenant": "acme" } });
    const events = await collect(caller.users.events());
    assert.deepEqual(events, [
      { data: { online: true }, id: "1" },
      { data: { online: false }, id: "1", event: "renamed" },
      { data: 3, id: "1" },
    ]);
    const [request] = requests;
    assert.equal(request.url.pathname, "/api/sse");
    assert.deepEqual(
      [...request.url.searchParams],
      [
        ["_s", "demo"],
        ["_g", "users"],
        ["_m", "events"],
      ],
    );
    assert.equal(request.headers.accept, "text/event-stream");
    assert.equal(request.headers["cache-control"], "no-cache");
    assert.equal(request.headers["x-tenant"], "acme");
    assert.equal(request.headers["last-event-id"], undefined);
  });

  test("variables go in `_v`; the path is proxyPath.sse", async (t) => {
    const { base, requests } = await serve(t, (req, res) => {
      res.writeHead(204);
      res.end();
    });
    const caller = createProxyCaller(routes, { baseUrl: base, proxyPath: { sse: "/live" } });
    await collect(caller.users.events({ id: 7 }));
    assert.equal(requests[0].url.pathname, "/live");
    assert.equal(requests[0].url.searchParams.get("_v"), '{"id":7}');
  });

  test("credentials and the call's headers go with the request; opening waits for the first iteration", async (t) => {
    const requests = fakeFetch(t, () => new Response("data: 1\n\n" + END, { headers: { "content-type": "text/event-stream" } }));
    const caller = createProxyCaller(routes, { baseUrl: "https://app.example", credentials: "same-origin", headers: { "x-a": "1" } });
    const stream = caller.users.with({ headers: { "x-a": "2" } }).events();
    assert.equal(requests.length, 0, "nothing before the first iteration");
    assert.deepEqual(await collect(stream), [{ data: 1 }]);
    assert.equal(requests[0].credentials, "same-origin");
    assert.equal(requests[0].headers.get("x-a"), "2");
    assert.equal(requests[0].method, "GET");
  });
});

describe("resuming", () => {
  test("a dropped connection resumes after the server's retry, with Last-Event-ID", async (t) => {
    let droppedAt = 0;
    const { base, requests } = await serve(t, (req, res, index) => {
      if (index === 0) {
        writeThenDrop(res, 'retry: 60\n\nid: 41\ndata: "a"\n\ndata: "unfinished', (at) => (droppedAt = at));
      } else {
        res.writeHead(200, EVENTS);
        res.end('id: 42\ndata: "b"\n\n' + END);
      }
    });
    const stream = createProxyCaller(routes, { baseUrl: base }).users.events();
    const events = await collect(stream);
    assert.deepEqual(events, [
      { data: "a", id: "41" },
      { data: "b", id: "42" },
    ]);
    assert.equal(requests.length, 2);
    assert.equal(requests[1].headers["last-event-id"], "41");
    assert.ok(requests[1].at - droppedAt >= 55, `waited ${requests[1].at - droppedAt} ms`);
    assert.equal(stream.lastEventId, "42");
  });

  test("courier's gap event is not handed over: its id is the stream's last event id, and reading goes on", async (t) => {
    const gap = (id) => `event: courier.gap\nid: ${id}\ndata: {"reason":"messages were missed: the history no longer holds e1:12"}\n\n`;
    const { base, requests } = await serve(t, (req, res, index) => {
      if (index === 0) writeThenDrop(res, 'retry: 10\n\nid: e1:12\ndata: "a"\n\n');
      // The history lost e1:12: the stream goes on from the latest position, after the gap.
      else if (index === 1) writeThenDrop(res, gap("e2:57"));
      else {
        res.writeHead(200, EVENTS);
        res.end(`${gap("e3:3")}id: e3:4\ndata: "b"\n\n${END}`);
      }
    });
    const stream = createProxyCaller(routes, { baseUrl: base }).users.events();
    const events = await collect(stream);
    assert.deepEqual(events, [
      { data: "a", id: "e1:12" },
      { data: "b", id: "e3:4" },
    ]);
    assert.deepEqual(
      requests.map((r) => r.headers["last-event-id"]),
      [undefined, "e1:12", "e2:57"],
    );
    assert.equal(stream.lastEventId, "e3:4");
  });

  test("failed reconnections in a row double the wait", async (t) => {
    let droppedAt = 0;
    const { base, requests } = await serve(t, (req, res, index) => {
      if (index === 0) writeThenDrop(res, 'retry: 40\n\nid: 1\ndata: 1\n\n', (at) => (droppedAt = at));
      else if (index < 3) req.socket.destroy();
      else {
        res.writeHead(200, EVENTS);
        res.end("data: 2\n\n" + END);
      }
    });
    const events = await collect(createProxyCaller(routes, { baseUrl: base }).users.events());
    assert.deepEqual(
      events.map((e) => e.data),
      [1, 2],
    );
    assert.equal(requests.length, 4);
    const gaps = [requests[1].at - droppedAt, requests[2].at - requests[1].at, requests[3].at - requests[2].at];
    assert.ok(gaps[0] >= 35, `gaps ${gaps}`);
    assert.ok(gaps[1] >= 75, `gaps ${gaps}`);
    assert.ok(gaps[2] >= 155, `gaps ${gaps}`);
    assert.equal(requests[3].headers["last-event-id"], "1");
  });

  test("the wait doubles up to 30 s, or the server's longer retry", () => {
    assert.equal(backoff(3000, 1), 6000);
    assert.equal(backoff(3000, 3), 24000);
    assert.equal(backoff(3000, 4), 30000);
    assert.equal(backoff(3000, 100), 30000);
    assert.equal(backoff(60000, 1), 60000);
    assert.equal(backoff(0, 1), 200, "from at least 100 ms");
    assert.equal(backoff(0, 3), 800);
  });

  test("a reconnection refused (≥ 400) ends the stream with its HTTPError", async (t) => {
    const { base, requests } = await serve(t, (req, res, index) => {
      if (index === 0) writeThenDrop(res, "retry: 10\n\ndata: 1\n\n");
      else {
        res.writeHead(503, { "content-type": "application/json" });
        res.end('{"error":{"code":"UPSTREAM_UNREACHABLE","message":"down"}}');
      }
    });
    const seen = [];
    await assert.rejects(
      (async () => {
        for await (const event of createProxyCaller(routes, { baseUrl: base }).users.events()) seen.push(event.data);
      })(),
      (error) => error instanceof HTTPError && error.status === 503 && error.code === "UPSTREAM_UNREACHABLE",
    );
    assert.deepEqual(seen, [1]);
    await sleep(50);
    assert.equal(requests.length, 2);
  });
});

describe("how a stream ends", () => {
  test("204: no events, one request", async (t) => {
    const { base, requests } = await serve(t, (req, res) => {
      res.writeHead(204);
      res.end();
    });
    assert.deepEqual(await collect(createProxyCaller(routes, { baseUrl: base }).users.events()), []);
    await sleep(30);
    assert.equal(requests.length, 1);
  });

  test("a body that ends is a dropped connection: resumed with Last-Event-ID, nothing lost", async (t) => {
    // Two events to a response, each ended cleanly (an idle timeout, a load balancer), then
    // courier's end event.
    const { base, requests } = await serve(t, (req, res) => {
      const last = req.headers["last-event-id"];
      const from = last === undefined ? 1 : Number(last) + 1;
      let body = "retry: 10\n\n";
      for (let n = from; n < Math.min(from + 2, 7); n += 1) body += `id: ${n}\ndata: ${n}\n\n`;
      if (from + 2 > 6) body += END;
      res.writeHead(200, EVENTS);
      res.end(body);
    });
    const events = await collect(createProxyCaller(routes, { baseUrl: base }).users.events());
    assert.deepEqual(
      events.map((e) => e.data),
      [1, 2, 3, 4, 5, 6],
    );
    assert.deepEqual(
      requests.map((r) => r.headers["last-event-id"]),
      [undefined, "2", "4"],
    );
    await sleep(50);
    assert.equal(requests.length, 3, "no reconnection after the end event");
  });

  test("a server that ends every response at once is retried with a growing wait", async (t) => {
    const { base, requests } = await serve(t, (req, res, index) => {
      res.writeHead(200, EVENTS);
      res.end(index === 0 ? "retry: 0\n\nid: 1\ndata: 1\n\n" : ": nothing\n\n");
    });
    const stream = createProxyCaller(routes, { baseUrl: base }).users.events();
    const seen = [];
    const reading = (async () => {
      for await (const event of stream) seen.push(event.data);
    })();
    await sleep(1600);
    stream.close();
    await reading;
    assert.deepEqual(seen, [1]);
    // Attempts at 0, then 200, 400, 800 ms apart: no more than five in 1.6 s.
    assert.ok(requests.length >= 3 && requests.length <= 5, `${requests.length} requests`);
    const gaps = requests.slice(1).map((r, i) => r.at - requests[i].at);
    assert.ok(gaps.slice(1).every((gap, i) => gap >= 180 * 2 ** i), `gaps ${gaps}`);
  });

  test("a status ≥ 400 throws HTTPError with the parsed body; onError sees it; no reconnect", async (t) => {
    const { base, requests } = await serve(t, (req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":{"code":"ENDPOINT_NOT_IN_ROUTES","message":"`users.events` is not exposed"}}');
    });
    const errors = [];
    const caller = createProxyCaller(routes, { baseUrl: base, onError: (e) => errors.push(e) });
    await assert.rejects(collect(caller.users.events()), (error) => {
      assert.ok(error instanceof HTTPError);
      assert.equal(error.status, 404);
      assert.equal(error.code, "ENDPOINT_NOT_IN_ROUTES");
      assert.equal(error.path, "users.events");
      return true;
    });
    assert.equal(errors.length, 1);
    await sleep(30);
    assert.equal(requests.length, 1);
  });

  test("a 200 that is not an event stream, or another status, is a protocol error", async (t) => {
    const { base } = await serve(t, (req, res, index) => {
      if (index === 0) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{}");
      } else {
        res.writeHead(202, EVENTS);
        res.end();
      }
    });
    const caller = createProxyCaller(routes, { baseUrl: base });
    await assert.rejects(collect(caller.users.events()), (error) => {
      assert.ok(error instanceof StreamError);
      assert.equal(error.kind, "protocol");
      assert.match(error.message, /application\/json/);
      return true;
    });
    await assert.rejects(collect(caller.users.events()), (error) => error instanceof StreamError && /202/.test(error.message));
  });

  test("courier's `event: error` frame throws StreamError `failed` with the server's code", async (t) => {
    const { base } = await serve(t, (req, res) => {
      res.writeHead(200, EVENTS);
      res.end(
        'event: error\ndata: "an ordinary event named error"\n\ndata: 1\n\nevent: error\ndata: {"error":{"code":"STREAM_FAILED","message":"the feed is gone"}}\n\ndata: 2\n\n',
      );
    });
    const seen = [];
    await assert.rejects(
      (async () => {
        for await (const event of createProxyCaller(routes, { baseUrl: base }).users.events()) seen.push(event);
      })(),
      (error) => {
        assert.ok(error instanceof StreamError);
        assert.equal(error.kind, "failed");
        assert.equal(error.code, "STREAM_FAILED");
        assert.match(error.message, /the feed is gone/);
        return true;
      },
    );
    assert.deepEqual(seen, [{ data: "an ordinary event named error", event: "error" }, { data: 1 }]);
  });

  test("an event whose data is not JSON throws StreamError `decode` and closes the connection", async (t) => {
    const { base, requests } = await serve(t, (req, res) => {
      res.writeHead(200, EVENTS);
      res.write("data: 1\n\ndata: not json\n\n");
    });
    await assert.rejects(collect(createProxyCaller(routes, { baseUrl: base }).users.events()), (error) => {
      assert.ok(error instanceof StreamError);
      assert.equal(error.kind, "decode");
      assert.ok(error.cause instanceof SyntaxError);
      return true;
    });
    await sleep(50);
    assert.equal(requests[0].closed, true);
  });

  test("breaking out closes the connection; nothing more is requested", async (t) => {
    const { base, requests } = await serve(t, (req, res) => {
      res.writeHead(200, EVENTS);
      res.write("retry: 5\n\ndata: 1\n\ndata: 2\n\n");
    });
    for await (const event of createProxyCaller(routes, { baseUrl: base }).users.events()) {
      assert.equal(event.data, 1);
      break;
    }
    await sleep(50);
    assert.equal(requests.length, 1);
    assert.equal(requests[0].closed, true);
  });

  test("close() while waiting ends the iteration quietly; close() before it requests nothing", async (t) => {
    const { base, requests } = await serve(t, (req, res) => {
      res.writeHead(200, EVENTS);
      res.write("data: 1\n\n");
    });
    const caller = createProxyCaller(routes, { baseUrl: base });
    const stream = caller.users.events();
    const seen = [];
    const reading = (async () => {
      for await (const event of stream) {
        seen.push(event.data);
        setTimeout(() => stream.close(), 10);
      }
    })();
    await reading;
    assert.deepEqual(seen, [1]);
    const unused = caller.users.events();
    unused.close();
    assert.deepEqual(await collect(unused), []);
    await sleep(30);
    assert.equal(requests.length, 1);
    assert.equal(requests[0].closed, true);
  });

  test("the call's signal ends it quietly", async (t) => {
    const { base } = await serve(t, (req, res) => {
      res.writeHead(200, EVENTS);
      res.write("data: 1\n\n");
    });
    const controller = new AbortController();
    const stream = createProxyCaller(routes, { baseUrl: base }).users.with({ signal: controller.signal }).events();
    const seen = [];
    for await (const event of stream) {
      seen.push(event.data);
      controller.abort();
    }
    assert.deepEqual(seen, [1]);
  });

  test("the first request failing on the network throws HTTPError status 0", async (t) => {
    const server = http.createServer();
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = server.address().port;
    await new Promise((resolve) => server.close(resolve));
    const errors = [];
    const caller = createProxyCaller(routes, { baseUrl: `http://127.0.0.1:${port}`, onError: (e) => errors.push(e) });
    await assert.rejects(collect(caller.users.events()), (error) => error instanceof HTTPError && error.status === 0 && error.code === "NETWORK");
    assert.equal(errors.length, 1);
  });
});

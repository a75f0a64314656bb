// Upload progress: calls with `onUploadProgress` go through XMLHttpRequest.

import assert from "node:assert/strict";
import { test } from "node:test";
import { HTTPError, createProxyCaller } from "../../dist/index.js";
import { fakeFetch, flush } from "../support/fetch.mjs";
import { BASE, routes } from "../support/routes.mjs";

/** A fake XMLHttpRequest: records the request; the test plays the upload and the answer. */
class FakeXhr {
  static made = [];

  constructor() {
    this.listeners = {};
    this.upload = { listeners: {}, addEventListener: (type, fn) => ((this.upload.listeners[type] ??= []).push(fn)) };
    this.headers = {};
    this.aborted = false;
    FakeXhr.made.push(this);
  }
  addEventListener(type, fn) {
    (this.listeners[type] ??= []).push(fn);
  }
  open(method, url, async) {
    Object.assign(this, { method, url: new URL(url), async });
  }
  setRequestHeader(name, value) {
    this.headers[name] = value;
  }
  send(body) {
    this.body = body;
  }
  abort() {
    this.aborted = true;
    this.emit("abort");
  }
  getAllResponseHeaders() {
    return this.responseHeaders ?? "";
  }
  emit(type, event = {}) {
    for (const fn of this.listeners[type] ?? []) fn(event);
  }
  progress(type, loaded, total) {
    for (const fn of this.upload.listeners[type] ?? []) fn({ lengthComputable: total !== undefined, loaded, total });
  }
  answer(status, body, headers = "content-type: application/json\r\n") {
    this.status = status;
    this.response = new TextEncoder().encode(body).buffer;
    this.responseHeaders = headers;
    this.emit("load");
  }
}

function install(t) {
  const original = globalThis.XMLHttpRequest;
  FakeXhr.made = [];
  globalThis.XMLHttpRequest = FakeXhr;
  t.after(() => {
    globalThis.XMLHttpRequest = original;
  });
}

const caller = (options = {}) => createProxyCaller(routes, { baseUrl: BASE, ...options });

test("progress goes 0 → 1 and the call resolves only after 1; XHR, POST, withCredentials", async (t) => {
  install(t);
  const requests = fakeFetch(t);
  const seen = [];
  let resolved = false;
  const call = caller({ headers: { "x-tenant": "acme" } })
    .users.with({ onUploadProgress: ({ percent }) => seen.push(percent) })
    .get({ id: 7 })
    .then((value) => {
      resolved = true;
      return value;
    });
  const [xhr] = FakeXhr.made;
  assert.equal(requests.length, 0, "not through fetch");
  assert.equal(xhr.method, "POST", "a GET read goes as POST when it watches its upload");
  assert.equal(xhr.async, true);
  assert.equal(xhr.withCredentials, true);
  assert.equal(xhr.responseType, "arraybuffer");
  assert.equal(xhr.body, '{"variables":{"id":7}}');
  assert.equal(xhr.headers["content-type"], "application/json");
  assert.equal(xhr.headers["x-tenant"], "acme");
  assert.deepEqual([...xhr.url.searchParams.keys()], ["_s", "_g", "_m"]);
  xhr.progress("loadstart", 0, 100);
  xhr.progress("progress", 40, 100);
  xhr.progress("progress", 30, 100); // never backwards
  xhr.progress("progress", 90, 100);
  await flush();
  assert.equal(resolved, false);
  // The browser's last event fell short of 1: the answer reports it.
  xhr.answer(200, '{"ok":true}', "content-type: application/json\r\nx-a: b\r\nbroken line\r\n");
  assert.deepEqual(await call, { ok: true });
  assert.deepEqual(seen, [0, 0.4, 0.9, 1]);
});

test('credentials "omit" turns withCredentials off; FormData is sent as it is', async (t) => {
  install(t);
  const form = new FormData();
  form.append("photo", new Blob(["x"]), "x.png");
  const call = caller({ credentials: "omit" })
    .users.with({ onUploadProgress: () => {} })
    .avatar(form);
  const [xhr] = FakeXhr.made;
  assert.equal(xhr.withCredentials, false);
  assert.equal(xhr.body, form);
  assert.equal(xhr.headers["content-type"], undefined);
  xhr.progress("load", 1, 1);
  xhr.answer(200, "");
  assert.equal(await call, null);
});

test("raw responses carry the XHR's status and headers; a status ≥ 400 is an HTTPError", async (t) => {
  install(t);
  const c = caller().users.with({ onUploadProgress: () => {} });
  const ok = c.raw.create({ name: "Ada" });
  FakeXhr.made[0].answer(201, '{"id":1}', "content-type: application/json\r\nx-a: b\r\n");
  const response = await ok;
  assert.equal(response.status, 201);
  assert.equal(response.headers.get("x-a"), "b");
  assert.deepEqual(response.data, { id: 1 });
  const refused = c.create({ name: "Ada" });
  FakeXhr.made[1].answer(413, '{"error":{"code":"PAYLOAD_TOO_LARGE","message":"over 1 MiB"}}');
  await assert.rejects(refused, (error) => error instanceof HTTPError && error.status === 413 && error.code === "PAYLOAD_TOO_LARGE");
});

test("a network failure is status 0; a timeout aborts the XHR", async (t) => {
  install(t);
  const failed = caller().users.with({ onUploadProgress: () => {} }).create({});
  FakeXhr.made[0].emit("error");
  await assert.rejects(failed, { status: 0, code: "NETWORK" });
  const slow = caller({ timeout: 20 }).users.with({ onUploadProgress: () => {} }).create({});
  await assert.rejects(slow, { status: 0, code: "TIMEOUT" });
  assert.equal(FakeXhr.made[1].aborted, true);
});

test("a progress hook that throws is reported, the upload goes on", async (t) => {
  install(t);
  const reported = t.mock.method(console, "error", () => {});
  const call = caller()
    .users.with({
      onUploadProgress: () => {
        throw new Error("bad bar");
      },
    })
    .create({});
  FakeXhr.made[0].answer(200, "1");
  assert.equal(await call, 1);
  assert.ok(reported.mock.callCount() >= 1);
});

test("forced GET with upload progress is INVALID_OPTION", async (t) => {
  install(t);
  await assert.rejects(caller().users.with({ method: "GET", onUploadProgress: () => {} }).get(1), { code: "INVALID_OPTION" });
  assert.equal(FakeXhr.made.length, 0);
});

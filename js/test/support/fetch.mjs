// A fake `fetch` for the unit tests: records each request and answers with the handler's
// Response; requests left pending honour their signal as the real fetch does.

/** A promise with its resolve and reject. */
export function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((a, b) => {
    resolve = a;
    reject = b;
  });
  return { promise, resolve, reject };
}

/**
 * Installs a fake `globalThis.fetch` for the test `t`; `handler(request)` returns a Response
 * (or a promise of one). Returns the list of requests seen.
 */
export function fakeFetch(t, handler = () => json(200, null)) {
  const requests = [];
  const original = globalThis.fetch;
  globalThis.fetch = async (input, init = {}) => {
    const request = {
      url: new URL(String(input)),
      method: init.method ?? "GET",
      headers: new Headers(init.headers),
      body: init.body ?? null,
      credentials: init.credentials,
      signal: init.signal,
    };
    requests.push(request);
    const answer = Promise.resolve(handler(request, requests.length - 1));
    const signal = init.signal;
    if (!signal) return answer;
    if (signal.aborted) throw signal.reason;
    return new Promise((resolve, reject) => {
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      answer.then(resolve, reject);
    });
  };
  t.after(() => {
    globalThis.fetch = original;
  });
  return requests;
}

/** A JSON response. */
export function json(status, body, headers = {}) {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** Waits for pending promise callbacks to run. */
export function flush() {
  return new Promise((resolve) => setImmediate(resolve));
}

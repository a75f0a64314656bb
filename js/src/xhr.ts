/**
 * A call that watches its upload: `fetch` cannot report upload progress, so such a call goes
 * through `XMLHttpRequest`.
 *
 * @module
 */

import type { UploadProgress } from "./options.js";
import type { ProxyRequest, RawResponse } from "./wire.js";

/**
 * Sends `request` with `XMLHttpRequest`, reporting upload progress from 0 to 1; resolves once
 * the response is in and progress has reached 1 (reported here if the browser's last event
 * fell short). Rejects on a network failure or when `signal` aborts.
 */
export function sendWithProgress(
  request: ProxyRequest,
  signal: AbortSignal,
  onProgress: (progress: UploadProgress) => void,
  path: string,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const Xhr = globalThis.XMLHttpRequest;
    if (typeof Xhr !== "function") {
      reject(new TypeError("`onUploadProgress` needs XMLHttpRequest, which this runtime does not have"));
      return;
    }
    let reported = -1;
    const report = (percent: number): void => {
      const clamped = Math.min(1, Math.max(0, percent));
      // Progress only goes forward.
      if (clamped <= reported) return;
      reported = clamped;
      try {
        onProgress({ percent: clamped });
      } catch (error) {
        console.error(`courier: the onUploadProgress hook of \`${path}\` failed`, error);
      }
    };
    const xhr = new Xhr();
    xhr.open(request.method, request.url, true);
    xhr.responseType = "arraybuffer";
    xhr.withCredentials = request.credentials !== "omit";
    request.headers.forEach((value, name) => xhr.setRequestHeader(name, value));
    xhr.upload.addEventListener("loadstart", () => report(0));
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable && event.total > 0) report(event.loaded / event.total);
    });
    xhr.upload.addEventListener("load", () => report(1));
    xhr.addEventListener("load", () => {
      signal.removeEventListener("abort", abort);
      report(1);
      const body = xhr.response instanceof ArrayBuffer ? xhr.response : new ArrayBuffer(0);
      resolve({ status: xhr.status, headers: parseHeaders(xhr.getAllResponseHeaders()), body });
    });
    const failed = (why: string) => () => {
      signal.removeEventListener("abort", abort);
      reject(new TypeError(why));
    };
    xhr.addEventListener("error", failed("the upload to the proxy failed"));
    xhr.addEventListener("abort", failed("the upload was aborted"));
    xhr.addEventListener("timeout", failed("the upload timed out"));
    const abort = (): void => xhr.abort();
    signal.addEventListener("abort", abort, { once: true });
    xhr.send(request.body ?? null);
  });
}

/** `getAllResponseHeaders()`'s text as `Headers`; a line that is not a valid header is skipped. */
export function parseHeaders(text: string): Headers {
  const headers = new Headers();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    try {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch {
      // Not a header a `Headers` accepts.
    }
  }
  return headers;
}

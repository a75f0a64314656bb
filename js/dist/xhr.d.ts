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
export declare function sendWithProgress(request: ProxyRequest, signal: AbortSignal, onProgress: (progress: UploadProgress) => void, path: string): Promise<RawResponse>;
/** `getAllResponseHeaders()`'s text as `Headers`; a line that is not a valid header is skipped. */
export declare function parseHeaders(text: string): Headers;

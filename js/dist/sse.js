/**
 * Streams (`{ transport: "sse" }`): server-sent events through the proxy's `sse` path, read
 * with `fetch` (so `credentials` and headers apply, which `EventSource` cannot do), resumed
 * with `Last-Event-ID` when the connection drops.
 *
 * @module
 */
import { addAddress, mergeHeaders, resolveUrl, runHook, sleep } from "./context.js";
import { ConfigurationError, HTTPError, StreamError, failure } from "./errors.js";
import { EventStreamParser } from "./sse-parser.js";
import { checkVariables, decodeErrorBody, isFormData, mediaType, variablesJson } from "./wire.js";
/** How long a stream waits before reconnecting until its server sends `retry:`, in milliseconds. */
export const DEFAULT_RETRY_MS = 3000;
/** The longest wait between failed reconnection attempts (unless the server's `retry` is longer). */
export const MAX_RETRY_MS = 30_000;
/**
 * The first wait after a failed attempt when the server asked for less (a `retry` of 0): a
 * connection that ends as soon as it opens is not tried again in a tight loop.
 */
export const MIN_BACKOFF_MS = 100;
/** The event a courier server ends a finite stream with (docs/PROTOCOL.md); never handed over. */
export const END_EVENT = "courier.end";
/**
 * The event a courier server starts a resumed stream with when it could not honour its
 * `Last-Event-ID` (docs/PROTOCOL.md, "Positions and recovery"): the events in between are lost,
 * and the stream goes on from the topic's latest position, the event's `id`. Never handed over;
 * its `id` becomes the stream's {@link EventStream.lastEventId}.
 */
export const GAP_EVENT = "courier.gap";
/**
 * Opens a stream: checks the call at once (throwing `ConfigurationError`), connects on the
 * first iteration.
 */
export function openStream(state, call) {
    const { settings } = state;
    const { path, variables } = call;
    const notSerializable = checkVariables(path, variables);
    if (notSerializable)
        throw notSerializable;
    if (isFormData(variables)) {
        throw new ConfigurationError("PROXY_VARIABLE_NOT_SERIALIZABLE", `\`${path}\`: a FormData goes with an HTTP call only; a stream's variables are JSON`, path);
    }
    const json = variablesJson(path, variables);
    const url = resolveUrl(settings, settings.paths.sse, path);
    addAddress(url, settings, call);
    if (json !== undefined)
        url.searchParams.append("_v", json);
    return new Subscription(state, call, url.href);
}
class Subscription {
    #controller = new AbortController();
    #parser = new EventStreamParser();
    #state;
    #call;
    #url;
    #events;
    constructor(state, call, url) {
        this.#state = state;
        this.#call = call;
        this.#url = url;
        const signal = call.options.signal;
        if (signal?.aborted)
            this.close();
        else
            signal?.addEventListener("abort", () => this.close(), { once: true });
    }
    get lastEventId() {
        return this.#parser.lastEventId;
    }
    [Symbol.asyncIterator]() {
        this.#events ??= this.#run();
        return this.#events;
    }
    close() {
        this.#controller.abort();
    }
    async *#run() {
        const signal = this.#controller.signal;
        const path = this.#call.path;
        let retry = DEFAULT_RETRY_MS;
        let failures = 0;
        let first = true;
        try {
            while (!signal.aborted) {
                let response;
                try {
                    response = await globalThis.fetch(this.#url, {
                        method: "GET",
                        headers: this.#headers(),
                        credentials: this.#call.options.credentials ?? this.#state.settings.credentials,
                        signal,
                    });
                }
                catch (error) {
                    if (signal.aborted)
                        return;
                    if (first) {
                        const message = error instanceof Error && error.message ? error.message : "the stream's request failed";
                        throw this.#refused(failure(0, "NETWORK", message, path, error));
                    }
                    failures += 1;
                    if (!(await sleep(backoff(retry, failures), signal)))
                        return;
                    continue;
                }
                first = false;
                const body = await this.#open(response);
                if (body === null)
                    return;
                this.#parser.restart();
                let delivered = false;
                const reader = body.getReader();
                try {
                    for (;;) {
                        let chunk;
                        try {
                            chunk = await reader.read();
                        }
                        catch {
                            if (signal.aborted)
                                return;
                            // The connection dropped: resume after the server's delay.
                            break;
                        }
                        // The body ended: to an EventSource, a dropped connection too.
                        if (chunk.done)
                            break;
                        for (const item of this.#parse(chunk.value)) {
                            if (item.kind === "retry")
                                retry = item.ms;
                            else if (item.event === END_EVENT)
                                return;
                            // The parser has already taken its id as the last event id.
                            else if (item.event === GAP_EVENT)
                                continue;
                            else {
                                delivered = true;
                                yield this.#event(item);
                            }
                        }
                    }
                }
                finally {
                    reader.cancel().catch(() => undefined);
                }
                this.#parser.finish();
                failures = delivered ? 0 : failures + 1;
                if (!(await sleep(delivered ? retry : backoff(retry, failures), signal)))
                    return;
            }
        }
        finally {
            this.#controller.abort();
        }
    }
    #headers() {
        const headers = mergeHeaders(this.#state.settings, this.#call.options);
        headers.set("accept", "text/event-stream");
        headers.set("cache-control", "no-cache");
        const last = this.#parser.lastEventId;
        if (last !== "")
            headers.set("last-event-id", last);
        return headers;
    }
    /** The body of an answer that opens the stream; `null` when the stream is over (204). */
    async #open(response) {
        const { status, headers } = response;
        const path = this.#call.path;
        if (status === 204) {
            await response.body?.cancel().catch(() => undefined);
            return null;
        }
        if (status >= 400) {
            let body;
            try {
                body = await response.arrayBuffer();
            }
            catch {
                if (this.#controller.signal.aborted)
                    return null;
                body = new ArrayBuffer(0);
            }
            const data = decodeErrorBody({ status, headers, body });
            throw this.#refused(new HTTPError(status, new Headers(headers), data, path));
        }
        if (status !== 200 || mediaType(headers) !== "text/event-stream") {
            await response.body?.cancel().catch(() => undefined);
            const kind = headers.get("content-type");
            throw new StreamError("protocol", status !== 200
                ? `a stream answers 200 or 204, not ${status}`
                : kind === null
                    ? "the response has no content type; expected `text/event-stream`"
                    : `the response is \`${kind}\`, not \`text/event-stream\``, path);
        }
        return response.body;
    }
    #parse(chunk) {
        try {
            return this.#parser.push(chunk);
        }
        catch (error) {
            throw new StreamError("protocol", error instanceof Error ? error.message : String(error), this.#call.path, {
                cause: error,
            });
        }
    }
    #event(item) {
        const path = this.#call.path;
        if (item.event === "error") {
            const failed = courierFailure(item.data);
            if (failed !== undefined) {
                throw new StreamError("failed", `${failed.code}: ${failed.message}`, path, { code: failed.code });
            }
        }
        let data;
        try {
            data = JSON.parse(item.data);
        }
        catch (error) {
            throw new StreamError("decode", `an event's data is not JSON: ${error instanceof Error ? error.message : String(error)}`, path, { cause: error });
        }
        return {
            data,
            ...(item.id !== "" ? { id: item.id } : {}),
            ...(item.event !== "message" ? { event: item.event } : {}),
        };
    }
    #refused(error) {
        runHook(this.#state.settings.onError, error, "onError");
        return error;
    }
}
/**
 * The wait before reconnection attempt `failures + 1`: the reconnection time (at least
 * {@link MIN_BACKOFF_MS}), doubled for each failure in a row, at most {@link MAX_RETRY_MS} (or
 * the server's own longer `retry`).
 */
export function backoff(retry, failures) {
    const base = Math.max(retry, MIN_BACKOFF_MS);
    return Math.min(base * 2 ** Math.min(failures, 16), Math.max(MAX_RETRY_MS, retry));
}
/** A courier server's `event: error` data, `{"error":{"code","message"}}`; `undefined` for any other `error` event. */
function courierFailure(data) {
    let value;
    try {
        value = JSON.parse(data);
    }
    catch {
        return undefined;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value))
        return undefined;
    const error = value.error;
    if (typeof error !== "object" || error === null)
        return undefined;
    const { code, message } = error;
    if (typeof code !== "string")
        return undefined;
    return { code, message: typeof message === "string" ? message : "" };
}
//# sourceMappingURL=sse.js.map
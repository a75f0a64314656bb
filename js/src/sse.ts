/**
 * Streams (`{ transport: "sse" }`): server-sent events through the proxy's `sse` path, read
 * with `fetch` (so `credentials` and headers apply, which `EventSource` cannot do), resumed
 * with `Last-Event-ID` when the connection drops.
 *
 * @module
 */

import type { Call, CallerState } from "./context.js";
import { addAddress, mergeHeaders, resolveUrl, runHook, sleep } from "./context.js";
import { ConfigurationError, HTTPError, StreamError, failure } from "./errors.js";
import type { ParsedItem } from "./sse-parser.js";
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
 * One event of a stream.
 *
 * @typeParam R - the stream's response type: each event's `data`, parsed from JSON
 */
export interface StreamEvent<R> {
  /** The event's data, parsed from JSON. */
  readonly data: R;
  /** The last event id at this event (the server's `id:`, kept until it sends another); absent when none. */
  readonly id?: string;
  /** The event's type when the server named one (`event:`); absent for the default `message`. */
  readonly event?: string;
}

/**
 * A subscription to a stream: iterate it with `for await`. Nothing is requested until the
 * first iteration; one iteration reads it (a second `for await` after the first ended finds
 * it over).
 *
 * | what happens | what the iteration does |
 * |---|---|
 * | the first request fails on the network | throws `HTTPError` status 0 (`NETWORK`) |
 * | the server answers ≥ 400 (on any connection) | throws `HTTPError`, no reconnect |
 * | a status other than 200 and 204, or a 200 that is not `text/event-stream` | throws `StreamError` `protocol`, no reconnect |
 * | `204 No Content` | ends, without events |
 * | the connection drops, or the body ends | waits the `retry` delay (3 s until the server sends `retry:`), reconnects with `Last-Event-ID`, as an `EventSource` does; each failed reconnection in a row doubles the wait (from at least 100 ms), up to 30 s (or the server's longer `retry`) |
 * | a body that ends without an event | counts as a failed reconnection, so a server that closes at once is not retried in a tight loop |
 * | courier's `event: courier.end` | ends (the event is not handed over): a courier server ends every finite stream with it |
 * | courier's `event: courier.gap` (the server could not resume from `Last-Event-ID`: events were missed) | goes on reading; the event is not handed over (the iteration has no way to tell of a loss without ending), its `id` becomes `lastEventId` |
 * | courier's `event: error` frame (`{"error":{"code","message"}}`) | throws `StreamError` `failed` with the server's `code` |
 * | an event's data is not JSON | throws `StreamError` `decode` and ends |
 * | `break`, `close()` or the call's `signal` | aborts the request and ends, no further requests |
 *
 * Every throw ends the stream and closes its connection.
 *
 * @typeParam R - the data of each event
 *
 * @example
 * ```ts
 * const events = caller.users.events({ id: 7 });
 * for await (const { data, id } of events) {
 *   if (!data.online) break; // closes the connection
 * }
 * ```
 */
export interface EventStream<R> extends AsyncIterable<StreamEvent<R>> {
  /** Ends the stream: the request in flight is aborted and nothing more is requested. */
  close(): void;
  /** The last event id the server gave (`""` when none): what a reconnection sends as `Last-Event-ID`. */
  readonly lastEventId: string;
}

/**
 * Opens a stream: checks the call at once (throwing `ConfigurationError`), connects on the
 * first iteration.
 */
export function openStream<R>(state: CallerState, call: Call): EventStream<R> {
  const { settings } = state;
  const { path, variables } = call;
  const notSerializable = checkVariables(path, variables);
  if (notSerializable) throw notSerializable;
  if (isFormData(variables)) {
    throw new ConfigurationError(
      "PROXY_VARIABLE_NOT_SERIALIZABLE",
      `\`${path}\`: a FormData goes with an HTTP call only; a stream's variables are JSON`,
      path,
    );
  }
  const json = variablesJson(path, variables);
  const url = resolveUrl(settings, settings.paths.sse, path);
  addAddress(url, settings, call);
  if (json !== undefined) url.searchParams.append("_v", json);
  return new Subscription<R>(state, call, url.href);
}

class Subscription<R> implements EventStream<R> {
  readonly #controller = new AbortController();
  readonly #parser = new EventStreamParser();
  readonly #state: CallerState;
  readonly #call: Call;
  readonly #url: string;
  #events: AsyncGenerator<StreamEvent<R>, void, undefined> | undefined;

  constructor(state: CallerState, call: Call, url: string) {
    this.#state = state;
    this.#call = call;
    this.#url = url;
    const signal = call.options.signal;
    if (signal?.aborted) this.close();
    else signal?.addEventListener("abort", () => this.close(), { once: true });
  }

  get lastEventId(): string {
    return this.#parser.lastEventId;
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamEvent<R>> {
    this.#events ??= this.#run();
    return this.#events;
  }

  close(): void {
    this.#controller.abort();
  }

  async *#run(): AsyncGenerator<StreamEvent<R>, void, undefined> {
    const signal = this.#controller.signal;
    const path = this.#call.path;
    let retry = DEFAULT_RETRY_MS;
    let failures = 0;
    let first = true;
    try {
      while (!signal.aborted) {
        let response: Response;
        try {
          response = await globalThis.fetch(this.#url, {
            method: "GET",
            headers: this.#headers(),
            credentials: this.#call.options.credentials ?? this.#state.settings.credentials,
            signal,
          });
        } catch (error) {
          if (signal.aborted) return;
          if (first) {
            const message = error instanceof Error && error.message ? error.message : "the stream's request failed";
            throw this.#refused(failure(0, "NETWORK", message, path, error));
          }
          failures += 1;
          if (!(await sleep(backoff(retry, failures), signal))) return;
          continue;
        }
        first = false;
        const body = await this.#open(response);
        if (body === null) return;
        this.#parser.restart();
        let delivered = false;
        const reader = body.getReader();
        try {
          for (;;) {
            let chunk: ReadableStreamReadResult<Uint8Array>;
            try {
              chunk = await reader.read();
            } catch {
              if (signal.aborted) return;
              // The connection dropped: resume after the server's delay.
              break;
            }
            // The body ended: to an EventSource, a dropped connection too.
            if (chunk.done) break;
            for (const item of this.#parse(chunk.value)) {
              if (item.kind === "retry") retry = item.ms;
              else if (item.event === END_EVENT) return;
              // The parser has already taken its id as the last event id.
              else if (item.event === GAP_EVENT) continue;
              else {
                delivered = true;
                yield this.#event(item);
              }
            }
          }
        } finally {
          reader.cancel().catch(() => undefined);
        }
        this.#parser.finish();
        failures = delivered ? 0 : failures + 1;
        if (!(await sleep(delivered ? retry : backoff(retry, failures), signal))) return;
      }
    } finally {
      this.#controller.abort();
    }
  }

  #headers(): Headers {
    const headers = mergeHeaders(this.#state.settings, this.#call.options);
    headers.set("accept", "text/event-stream");
    headers.set("cache-control", "no-cache");
    const last = this.#parser.lastEventId;
    if (last !== "") headers.set("last-event-id", last);
    return headers;
  }

  /** The body of an answer that opens the stream; `null` when the stream is over (204). */
  async #open(response: Response): Promise<ReadableStream<Uint8Array> | null> {
    const { status, headers } = response;
    const path = this.#call.path;
    if (status === 204) {
      await response.body?.cancel().catch(() => undefined);
      return null;
    }
    if (status >= 400) {
      let body: ArrayBuffer;
      try {
        body = await response.arrayBuffer();
      } catch {
        if (this.#controller.signal.aborted) return null;
        body = new ArrayBuffer(0);
      }
      const data = decodeErrorBody({ status, headers, body });
      throw this.#refused(new HTTPError(status, new Headers(headers), data, path));
    }
    if (status !== 200 || mediaType(headers) !== "text/event-stream") {
      await response.body?.cancel().catch(() => undefined);
      const kind = headers.get("content-type");
      throw new StreamError(
        "protocol",
        status !== 200
          ? `a stream answers 200 or 204, not ${status}`
          : kind === null
            ? "the response has no content type; expected `text/event-stream`"
            : `the response is \`${kind}\`, not \`text/event-stream\``,
        path,
      );
    }
    return response.body;
  }

  #parse(chunk: Uint8Array): ParsedItem[] {
    try {
      return this.#parser.push(chunk);
    } catch (error) {
      throw new StreamError("protocol", error instanceof Error ? error.message : String(error), this.#call.path, {
        cause: error,
      });
    }
  }

  #event(item: ParsedItem & { kind: "event" }): StreamEvent<R> {
    const path = this.#call.path;
    if (item.event === "error") {
      const failed = courierFailure(item.data);
      if (failed !== undefined) {
        throw new StreamError("failed", `${failed.code}: ${failed.message}`, path, { code: failed.code });
      }
    }
    let data: R;
    try {
      data = JSON.parse(item.data) as R;
    } catch (error) {
      throw new StreamError(
        "decode",
        `an event's data is not JSON: ${error instanceof Error ? error.message : String(error)}`,
        path,
        { cause: error },
      );
    }
    return {
      data,
      ...(item.id !== "" ? { id: item.id } : {}),
      ...(item.event !== "message" ? { event: item.event } : {}),
    };
  }

  #refused(error: HTTPError): HTTPError {
    runHook(this.#state.settings.onError, error, "onError");
    return error;
  }
}

/**
 * The wait before reconnection attempt `failures + 1`: the reconnection time (at least
 * {@link MIN_BACKOFF_MS}), doubled for each failure in a row, at most {@link MAX_RETRY_MS} (or
 * the server's own longer `retry`).
 */
export function backoff(retry: number, failures: number): number {
  const base = Math.max(retry, MIN_BACKOFF_MS);
  return Math.min(base * 2 ** Math.min(failures, 16), Math.max(MAX_RETRY_MS, retry));
}

/** A courier server's `event: error` data, `{"error":{"code","message"}}`; `undefined` for any other `error` event. */
function courierFailure(data: string): { code: string; message: string } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const error = (value as { error?: unknown }).error;
  if (typeof error !== "object" || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== "string") return undefined;
  return { code, message: typeof message === "string" ? message : "" };
}

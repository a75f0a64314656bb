/**
 * Streams (`{ transport: "sse" }`): server-sent events through the proxy's `sse` path, read
 * with `fetch` (so `credentials` and headers apply, which `EventSource` cannot do), resumed
 * with `Last-Event-ID` when the connection drops.
 *
 * @module
 */
import type { Call, CallerState } from "./context.js";
/** How long a stream waits before reconnecting until its server sends `retry:`, in milliseconds. */
export declare const DEFAULT_RETRY_MS = 3000;
/** The longest wait between failed reconnection attempts (unless the server's `retry` is longer). */
export declare const MAX_RETRY_MS = 30000;
/**
 * The first wait after a failed attempt when the server asked for less (a `retry` of 0): a
 * connection that ends as soon as it opens is not tried again in a tight loop.
 */
export declare const MIN_BACKOFF_MS = 100;
/** The event a courier server ends a finite stream with (docs/PROTOCOL.md); never handed over. */
export declare const END_EVENT = "courier.end";
/**
 * The event a courier server starts a resumed stream with when it could not honour its
 * `Last-Event-ID` (docs/PROTOCOL.md, "Positions and recovery"): the events in between are lost,
 * and the stream goes on from the topic's latest position, the event's `id`. Never handed over;
 * its `id` becomes the stream's {@link EventStream.lastEventId}.
 */
export declare const GAP_EVENT = "courier.gap";
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
export declare function openStream<R>(state: CallerState, call: Call): EventStream<R>;
/**
 * The wait before reconnection attempt `failures + 1`: the reconnection time (at least
 * {@link MIN_BACKOFF_MS}), doubled for each failure in a row, at most {@link MAX_RETRY_MS} (or
 * the server's own longer `retry`).
 */
export declare function backoff(retry: number, failures: number): number;

/**
 * Channels (`{ transport: "ws" }`): a WebSocket to the proxy's `ws` path, with courier's hello
 * frame, an application-level heartbeat, reconnection with backoff by close code, the channel's
 * position handed back on each reconnection (so a topic's history sends what was missed), and a
 * bounded queue of messages sent while disconnected.
 *
 * @module
 */
import type { Call, CallerState } from "./context.js";
import type { CallerWSOptions } from "./options.js";
/**
 * Where a channel stands: `connecting` (the first connection), `open`, `reconnecting` (after
 * a drop, waiting or dialling again), `closed` (for good).
 */
export type ChannelState = "connecting" | "open" | "reconnecting" | "closed";
/**
 * A channel that only pushes: iterate its messages with `for await`.
 *
 * It connects as soon as it is called. Messages that arrive while nobody iterates are kept,
 * without bound, until read. How it ends:
 *
 * | close code | the channel |
 * |---|---|
 * | 1000 | the iteration ends, no reconnect |
 * | 1001, 1005, 1006, 1011, 1012, 1013, 1014 | reconnects with backoff (`state` is `reconnecting`), from its {@link PushChannel.position} |
 * | 1012 with a reason starting `messages were missed:` | forgets its position (`null`), then reconnects with backoff: the server could not send what was missed |
 * | 4400–4499 | refused for good by the proxy or the upstream (4000 + the HTTP status: 4400 malformed address or variables, 4401 sign in, 4403 forbidden, 4404 not exposed or not found): the iteration throws `ChannelError` `refused` with `code`, `status`, `reason` and `refusal` (the reason's `CODE` in `"CODE: message"`), no reconnect |
 * | 1003, 1008, 1009, other 4000–4999, any other | the iteration throws `ChannelError` `closed` with `code` and `reason`, no reconnect |
 *
 * The backoff starts again from its first wait only once a connection is *stable*: it
 * delivered a message, or stayed open `STABLE_MS` (5000 ms). A socket that opens and at
 * once closes with a reconnecting code (an upstream that accepts, then fails with 1011) waits
 * longer each time, as a failed handshake does.
 *
 * A browser cannot see why a handshake failed: a handshake refused with an HTTP status (a 403,
 * a 404) shows as a close with 1006, and is retried with backoff like a dropped connection.
 *
 * Every connection opens with a hello frame whose `since` is the channel's position (`null` on
 * the first): a server whose topic keeps a history sends first what was published after it, in
 * order and once each, so a reconnection loses nothing. When it cannot (the history was lost, or
 * no longer reaches back that far) it closes with 1012 `messages were missed: …`; the channel
 * forgets its position, and on the next connection the channel's `on_join` runs afresh and can
 * bring the page up to date.
 *
 * @typeParam R - the channel's messages
 *
 * @example
 * ```ts
 * const ticker = caller.market.ticks("EURUSD");
 * ticker.onState((state) => badge.set(state));
 * for await (const tick of ticker) draw(tick);
 * ```
 */
export interface PushChannel<R> extends AsyncIterable<R> {
    /** Where the channel stands now. */
    readonly state: ChannelState;
    /**
     * The channel's position in its topic's history: the last one the server gave it (opaque,
     * `EPOCH:OFFSET`), with `courier.at` when it joined, then with each `courier.message`, as the
     * message arrives (before it is read). The next connection's hello frame sends it as `since`,
     * so the server sends first what was published meanwhile. `null` until the server gives one
     * (its topic keeps no history, or the channel's messages come plain), and again from a close
     * with 1012 `messages were missed: …` until the next connection's server gives one.
     */
    readonly position: string | null;
    /** Resolves when the first connection opens; rejects when the channel ends before that. */
    readonly opened: Promise<void>;
    /** Calls `listener` with every change of {@link PushChannel.state}; returns what stops it. */
    onState(listener: (state: ChannelState) => void): () => void;
    /** Closes the socket (1000) and ends the iteration; unread messages and unsent ones are dropped. */
    close(): void;
}
/**
 * A channel the page also sends on (its route is `bidirectional`).
 *
 * @typeParam R - the channel's messages
 * @typeParam S - what the page sends
 *
 * @example
 * ```ts
 * const room = caller.chat.room("lobby");
 * room.send({ text: "hello" }); // queued until the socket opens
 * for await (const message of room) console.log(message.from, message.text);
 * ```
 */
export interface DuplexChannel<R, S> extends PushChannel<R> {
    /**
     * Sends a message as JSON text: at once when connected, else queued (in order) until the
     * next connection opens, after its hello frame.
     *
     * @throws ChannelError `too-large` over `ws.maxMessageSize`, `queue-full` when the queue
     * cannot take it, `encode` when it is not JSON, `closed` once the channel ended — nothing is
     * dropped silently
     */
    send(message: S): void;
}
/**
 * A channel: {@link DuplexChannel} when it takes messages (`S` is not `never`), else
 * {@link PushChannel} (no `send`).
 */
export type Channel<R, S = never> = [S] extends [never] ? PushChannel<R> : DuplexChannel<R, S>;
/**
 * How long a connection stays open, delivering nothing, before it counts as stable and the
 * backoff is reset (a delivered message makes it stable at once). courier's Rust channel
 * client uses the same rule and number.
 */
export declare const STABLE_MS = 5000;
/** The defaults of {@link CallerWSOptions}. */
export declare const WS_DEFAULTS: {
    readonly backoff: {
        readonly initialMs: 500;
        readonly maxMs: 30000;
        readonly factor: 2;
        readonly jitter: true;
    };
    readonly heartbeat: {
        readonly intervalMs: 30000;
        readonly timeoutMs: 10000;
    };
    readonly messageQueue: {
        readonly maxCount: 1000;
        readonly maxBytes: 1048576;
    };
    readonly maxMessageSize: 1048576;
};
/**
 * Opens a channel: checks the call at once (throwing `ConfigurationError`) and connects.
 */
export declare function openChannel<R>(state: CallerState, call: Call, bidirectional: boolean): DuplexChannel<R, unknown>;
/**
 * The wait before reconnection attempt `attempt` (from 1): `initialMs × factor^(attempt−1)`,
 * at most `maxMs`, drawn at random in `[0, that]` with `jitter`.
 */
export declare function backoffDelay(backoff: CallerWSOptions["backoff"], attempt: number): number;

/**
 * Channels (`{ transport: "ws" }`): a WebSocket to the proxy's `ws` path, with courier's hello
 * frame, an application-level heartbeat, reconnection with backoff by close code, the channel's
 * position handed back on each reconnection (so a topic's history sends what was missed), and a
 * bounded queue of messages sent while disconnected.
 *
 * @module
 */

import { afterClose, missedMessages } from "./close.js";
import type { Call, CallerState } from "./context.js";
import { addAddress, mergeHeaders, resolveUrl } from "./context.js";
import { ChannelError, ConfigurationError } from "./errors.js";
import type { CallerWSOptions, WSAuthParams } from "./options.js";
import { checkVariables, isFormData, utf8Length, variablesJson } from "./wire.js";

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

const PING = '{"type":"courier.ping"}';

/**
 * A frame from the server, as the channel reads it (docs/PROTOCOL.md): the heartbeat's answer;
 * a position (`courier.at`); or a message to hand on, with its position when it came as
 * `courier.message`.
 */
type Frame =
  | { readonly kind: "pong" }
  | { readonly kind: "at"; readonly at: string }
  | { readonly kind: "message"; readonly data: unknown; readonly at: string | undefined };

/**
 * What a received JSON value is. A `courier.at` without a string `at`, or a `courier.message`
 * without a string `at` or without `data`, is not courier's: it is a plain message, handed on
 * whole, as any other value.
 */
function readFrame(value: unknown): Frame {
  const plain = { kind: "message", data: value, at: undefined } as const;
  if (typeof value !== "object" || value === null) return plain;
  const { type, at } = value as { type?: unknown; at?: unknown };
  if (type === "courier.pong") return { kind: "pong" };
  if (typeof at !== "string") return plain;
  if (type === "courier.at") return { kind: "at", at };
  if (type === "courier.message" && Object.prototype.hasOwnProperty.call(value, "data")) {
    return { kind: "message", data: (value as { data: unknown }).data, at };
  }
  return plain;
}

/**
 * How long a connection stays open, delivering nothing, before it counts as stable and the
 * backoff is reset (a delivered message makes it stable at once). courier's Rust channel
 * client uses the same rule and number.
 */
export const STABLE_MS = 5000;

/** The defaults of {@link CallerWSOptions}. */
export const WS_DEFAULTS = {
  backoff: { initialMs: 500, maxMs: 30_000, factor: 2, jitter: true },
  heartbeat: { intervalMs: 30_000, timeoutMs: 10_000 },
  messageQueue: { maxCount: 1000, maxBytes: 1_048_576 },
  maxMessageSize: 1_048_576,
} as const;

/**
 * Opens a channel: checks the call at once (throwing `ConfigurationError`) and connects.
 */
export function openChannel<R>(state: CallerState, call: Call, bidirectional: boolean): DuplexChannel<R, unknown> {
  const { settings } = state;
  const { path, variables } = call;
  const wsPath = settings.paths.ws;
  if (wsPath === undefined) {
    throw new ConfigurationError(
      "WS_PATH_NOT_CONFIGURED",
      `\`${path}\` is a channel and the proxy caller has no \`proxyPath.ws\``,
      path,
    );
  }
  const notSerializable = checkVariables(path, variables);
  if (notSerializable) throw notSerializable;
  if (isFormData(variables)) {
    throw new ConfigurationError(
      "PROXY_VARIABLE_NOT_SERIALIZABLE",
      `\`${path}\`: a FormData goes with an HTTP call only; a channel's variables are JSON`,
      path,
    );
  }
  const json = variablesJson(path, variables);
  const url = resolveUrl(settings, wsPath, path);
  if (url.protocol === "http:") url.protocol = "ws:";
  else if (url.protocol === "https:") url.protocol = "wss:";
  else if (url.protocol !== "ws:" && url.protocol !== "wss:") {
    throw new ConfigurationError("INVALID_OPTION", `the proxy's \`ws\` path \`${url.href}\` is not an http(s) or ws(s) address`, path);
  }
  addAddress(url, settings, call);
  if (json !== undefined) url.searchParams.append("_v", json);
  return new Connection<R>(state, call, url.href, bidirectional);
}

interface Reader<R> {
  resolve(result: IteratorResult<R>): void;
  reject(error: unknown): void;
}

class Connection<R> implements DuplexChannel<R, unknown> {
  readonly opened: Promise<void>;
  readonly #call: Call;
  readonly #url: string;
  readonly #ws: CallerWSOptions;
  readonly #helloHeaders: Record<string, string>;
  readonly #bidirectional: boolean;
  readonly #maxMessage: number;
  readonly #maxCount: number;
  readonly #maxBytes: number;
  #state: ChannelState = "connecting";
  #position: string | null = null;
  #socket: WebSocket | undefined;
  /** The socket is open and its hello frame sent: messages go straight out. */
  #open = false;
  #queue: string[] = [];
  #queueBytes = 0;
  #inbox: R[] = [];
  #readers: Reader<R>[] = [];
  #ended = false;
  #error: unknown;
  #errorTaken = false;
  #attempt = 0;
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  /** Until it fires (or a message is delivered) the open connection is not stable. */
  #stableTimer: ReturnType<typeof setTimeout> | undefined;
  #pingTimer: ReturnType<typeof setInterval> | undefined;
  #deadline: ReturnType<typeof setTimeout> | undefined;
  #listeners = new Set<(state: ChannelState) => void>();
  #settleOpened: { resolve(): void; reject(error: unknown): void } | undefined;

  constructor(state: CallerState, call: Call, url: string, bidirectional: boolean) {
    this.#call = call;
    this.#url = url;
    this.#ws = state.settings.ws;
    this.#bidirectional = bidirectional;
    this.#helloHeaders = Object.fromEntries(mergeHeaders(state.settings, call.options));
    this.#maxMessage = this.#ws.maxMessageSize ?? WS_DEFAULTS.maxMessageSize;
    this.#maxCount = this.#ws.messageQueue?.maxCount ?? WS_DEFAULTS.messageQueue.maxCount;
    this.#maxBytes = this.#ws.messageQueue?.maxBytes ?? WS_DEFAULTS.messageQueue.maxBytes;
    this.opened = new Promise<void>((resolve, reject) => {
      this.#settleOpened = { resolve, reject };
    });
    // Whoever does not await `opened` learns of the end from the iteration.
    this.opened.catch(() => undefined);
    const signal = call.options.signal;
    if (signal?.aborted) {
      this.close();
      return;
    }
    signal?.addEventListener("abort", () => this.close(), { once: true });
    this.#dial();
  }

  get state(): ChannelState {
    return this.#state;
  }

  get position(): string | null {
    return this.#position;
  }

  onState(listener: (state: ChannelState) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  send(message: unknown): void {
    const path = this.#call.path;
    if (!this.#bidirectional) {
      throw new ChannelError("push-only", "the channel only pushes (its route is not `bidirectional`)", path);
    }
    if (this.#ended) throw new ChannelError("closed", "the channel is closed", path);
    let text: string | undefined;
    try {
      text = JSON.stringify(message);
    } catch (error) {
      throw new ChannelError("encode", `the message is not JSON: ${String(error)}`, path, { cause: error });
    }
    if (text === undefined) throw new ChannelError("encode", `the message is ${typeof message}, which JSON cannot carry`, path);
    const size = utf8Length(text);
    if (size > this.#maxMessage) {
      throw new ChannelError("too-large", `the message is ${size} bytes, over the limit of ${this.#maxMessage}`, path);
    }
    if (this.#open && this.#socket !== undefined) {
      this.#socket.send(text);
      return;
    }
    if (this.#queue.length >= this.#maxCount || this.#queueBytes + size > this.#maxBytes) {
      throw new ChannelError(
        "queue-full",
        `the queue of unsent messages is full (${this.#maxCount} messages or ${this.#maxBytes} bytes)`,
        path,
      );
    }
    this.#queue.push(text);
    this.#queueBytes += size;
  }

  close(): void {
    if (this.#ended) return;
    this.#inbox = [];
    this.#end(undefined);
  }

  [Symbol.asyncIterator](): AsyncIterator<R> {
    return {
      next: () => this.#next(),
      return: () => {
        this.close();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  #next(): Promise<IteratorResult<R>> {
    if (this.#inbox.length > 0) return Promise.resolve({ done: false, value: this.#inbox.shift() as R });
    if (this.#ended) {
      if (this.#error !== undefined && !this.#errorTaken) {
        this.#errorTaken = true;
        return Promise.reject(this.#error);
      }
      return Promise.resolve({ done: true, value: undefined });
    }
    return new Promise((resolve, reject) => this.#readers.push({ resolve, reject }));
  }

  /** Computes the hello frame's parameters (afresh for every connection), then connects. */
  #dial(): void {
    if (this.#ended) return;
    const auth = this.#ws.auth;
    let params: unknown;
    try {
      params = typeof auth === "function" ? auth() : auth;
    } catch (error) {
      this.#authFailed(error);
      return;
    }
    if (typeof (params as PromiseLike<unknown> | undefined)?.then === "function") {
      (params as PromiseLike<WSAuthParams | undefined>).then(
        (resolved) => this.#connect(resolved),
        (error: unknown) => this.#authFailed(error),
      );
    } else {
      this.#connect(params);
    }
  }

  #authFailed(error: unknown): void {
    const why = error instanceof Error ? error.message : String(error);
    this.#end(new ChannelError("auth", `the channel's auth parameters could not be computed: ${why}`, this.#call.path, { cause: error }));
  }

  #connect(params: unknown): void {
    if (this.#ended) return;
    if (params !== undefined && params !== null && (typeof params !== "object" || Array.isArray(params))) {
      this.#authFailed(new TypeError(`\`ws.auth\` gave ${Array.isArray(params) ? "an array" : typeof params}, not an object`));
      return;
    }
    const hello = helloFrame(this.#position, params as WSAuthParams | null | undefined, this.#helloHeaders);
    const url = new URL(this.#url);
    // `_h=1` tells a courier server that a hello frame follows (docs/PROTOCOL.md).
    url.searchParams.append("_h", "1");
    const WebSocketClass = globalThis.WebSocket;
    let socket: WebSocket;
    try {
      if (typeof WebSocketClass !== "function") throw new TypeError("this runtime has no WebSocket");
      const protocols = this.#ws.protocols;
      socket =
        protocols !== undefined && protocols.length > 0
          ? new WebSocketClass(url.href, [...protocols])
          : new WebSocketClass(url.href);
    } catch (error) {
      this.#end(error);
      return;
    }
    socket.binaryType = "arraybuffer";
    this.#socket = socket;
    socket.onopen = () => {
      if (this.#socket !== socket) return;
      socket.send(hello);
      for (const text of this.#queue) socket.send(text);
      this.#queue = [];
      this.#queueBytes = 0;
      this.#open = true;
      // Not `#attempt = 0` yet: a socket that opens and closes at once must not reset the backoff.
      this.#stableTimer = setTimeout(() => this.#stable(), STABLE_MS);
      this.#setState("open");
      this.#settleOpened?.resolve();
      this.#settleOpened = undefined;
      this.#startHeartbeat();
    };
    socket.onmessage = (event: MessageEvent) => {
      if (this.#socket === socket) this.#receive(event.data);
    };
    socket.onclose = (event: CloseEvent) => {
      if (this.#socket === socket) this.#closed(event.code, event.reason);
    };
    // A close event follows every error; it decides.
    socket.onerror = () => undefined;
  }

  #receive(data: unknown): void {
    this.#alive();
    const path = this.#call.path;
    let text: string;
    if (typeof data === "string") {
      if (data.length > this.#maxMessage / 3 && utf8Length(data) > this.#maxMessage) {
        this.#tooBig(utf8Length(data));
        return;
      }
      text = data;
    } else if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) {
      const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      if (bytes.byteLength > this.#maxMessage) {
        this.#tooBig(bytes.byteLength);
        return;
      }
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch (error) {
        this.#undecodable(new ChannelError("decode", "a binary message is not UTF-8", path, { cause: error }));
        return;
      }
    } else {
      this.#undecodable(new ChannelError("decode", "a message arrived in a form the channel cannot read", path));
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.#undecodable(new ChannelError("decode", `a message is not JSON: ${String(error)}`, path, { cause: error }));
      return;
    }
    const frame = readFrame(value);
    // The heartbeat's answer is not a message.
    if (frame.kind === "pong") return;
    // Kept as it arrives, not as it is read: what is unread stays in the inbox across connections.
    if (frame.at !== undefined) this.#position = frame.at;
    // A position alone delivers nothing, so it does not make the connection stable.
    if (frame.kind === "at") return;
    this.#stable();
    const reader = this.#readers.shift();
    if (reader !== undefined) reader.resolve({ done: false, value: frame.data as R });
    else this.#inbox.push(frame.data as R);
  }

  /** The connection delivered a message or stayed open {@link STABLE_MS}: the backoff starts over. */
  #stable(): void {
    if (this.#stableTimer !== undefined) clearTimeout(this.#stableTimer);
    this.#stableTimer = undefined;
    this.#attempt = 0;
  }

  #tooBig(size: number): void {
    const reason = "message too big";
    this.#end(
      new ChannelError("closed", `a message of ${size} bytes is over the limit of ${this.#maxMessage}`, this.#call.path, {
        code: 1009,
        reason,
      }),
      reason,
    );
  }

  #undecodable(error: ChannelError): void {
    this.#end(error, "message not JSON");
  }

  #closed(code: number, reason: string): void {
    this.#drop();
    if (this.#ended) return;
    // Before the state changes, so an `onState` listener sees it.
    if (missedMessages(code, reason)) this.#position = null;
    const next = afterClose(code, reason, this.#call.path);
    if (next === "end") this.#end(undefined);
    else if (next === "reconnect") this.#reconnect();
    else this.#end(next);
  }

  #reconnect(): void {
    this.#attempt += 1;
    this.#setState("reconnecting");
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      this.#dial();
    }, backoffDelay(this.#ws.backoff, this.#attempt));
  }

  #startHeartbeat(): void {
    const interval = this.#ws.heartbeat?.intervalMs ?? WS_DEFAULTS.heartbeat.intervalMs;
    const timeout = this.#ws.heartbeat?.timeoutMs ?? WS_DEFAULTS.heartbeat.timeoutMs;
    if (!(interval > 0) || !Number.isFinite(interval)) return;
    this.#pingTimer = setInterval(() => {
      const socket = this.#socket;
      if (socket === undefined || !this.#open) return;
      socket.send(PING);
      this.#deadline ??= setTimeout(() => this.#dead(), timeout);
    }, interval);
  }

  /** Something arrived: the connection is alive. */
  #alive(): void {
    if (this.#deadline !== undefined) clearTimeout(this.#deadline);
    this.#deadline = undefined;
  }

  /** The heartbeat went unanswered: replace the connection. */
  #dead(): void {
    this.#deadline = undefined;
    const socket = this.#socket;
    this.#drop();
    closeQuietly(socket, "heartbeat unanswered");
    if (!this.#ended) this.#reconnect();
  }

  /** Forgets the current socket (its events are ignored from now on), its heartbeat and its stable timer. */
  #drop(): void {
    this.#socket = undefined;
    this.#open = false;
    if (this.#pingTimer !== undefined) clearInterval(this.#pingTimer);
    this.#pingTimer = undefined;
    if (this.#stableTimer !== undefined) clearTimeout(this.#stableTimer);
    this.#stableTimer = undefined;
    this.#alive();
  }

  /**
   * Ends the channel for good: closes the socket (with `reason`; browsers may only close with
   * 1000 or 3000–4999, so the code is 1000 and the error carries the real one) and ends the
   * iteration, with `error` when there is one.
   */
  #end(error: unknown, reason = ""): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    const socket = this.#socket;
    this.#drop();
    closeQuietly(socket, reason);
    if (this.#reconnectTimer !== undefined) clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = undefined;
    this.#queue = [];
    this.#queueBytes = 0;
    this.#setState("closed");
    this.#settleOpened?.reject(error ?? new ChannelError("closed", "the channel closed before it opened", this.#call.path));
    this.#settleOpened = undefined;
    const readers = this.#readers;
    this.#readers = [];
    for (const reader of readers) {
      if (error !== undefined && !this.#errorTaken) {
        this.#errorTaken = true;
        reader.reject(error);
      } else {
        reader.resolve({ done: true, value: undefined });
      }
    }
  }

  #setState(state: ChannelState): void {
    if (this.#state === state) return;
    this.#state = state;
    for (const listener of [...this.#listeners]) {
      try {
        listener(state);
      } catch (error) {
        console.error("courier: a channel's onState listener failed", error);
      }
    }
  }
}

function closeQuietly(socket: WebSocket | undefined, reason: string): void {
  if (socket === undefined) return;
  socket.onopen = null;
  socket.onmessage = null;
  socket.onclose = null;
  socket.onerror = null;
  try {
    socket.close(1000, reason);
  } catch {
    // Already closing.
  }
}

/**
 * The hello frame every connection opens with: the channel's position as `since` (`null` when
 * it has none), `auth` when `ws.auth` gave parameters, `headers` when there are default headers.
 */
function helloFrame(since: string | null, auth: WSAuthParams | null | undefined, headers: Record<string, string>): string {
  return JSON.stringify({
    type: "courier.hello",
    since,
    ...(auth === undefined || auth === null ? {} : { auth }),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  });
}

/**
 * The wait before reconnection attempt `attempt` (from 1): `initialMs × factor^(attempt−1)`,
 * at most `maxMs`, drawn at random in `[0, that]` with `jitter`.
 */
export function backoffDelay(backoff: CallerWSOptions["backoff"], attempt: number): number {
  const initial = backoff?.initialMs ?? WS_DEFAULTS.backoff.initialMs;
  const max = backoff?.maxMs ?? WS_DEFAULTS.backoff.maxMs;
  const factor = Math.max(1, backoff?.factor ?? WS_DEFAULTS.backoff.factor);
  const jitter = backoff?.jitter ?? WS_DEFAULTS.backoff.jitter;
  const ms = Math.max(0, Math.min(initial * factor ** Math.max(0, attempt - 1), max));
  return jitter ? Math.random() * ms : ms;
}

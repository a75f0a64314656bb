/**
 * The options of the proxy caller, of one call, and of its channels' sockets.
 *
 * @module
 */

import type { HTTPError } from "./errors.js";
import type { CsrfNames, RoutesRecord } from "./routes.js";

/**
 * Where the app serves its proxy routes, per transport. Each is a path (resolved against the
 * page's origin, or {@link ProxyCallerOptions.baseUrl}) or an absolute URL; a missing one
 * falls back to its default.
 *
 * @example
 * ```ts
 * createProxyCaller(routes, { proxyPath: { ws: "/api/ws" } });
 * ```
 */
export interface ProxyPath {
  /** HTTP calls. Default `"/api/request"`. */
  readonly http?: string | undefined;
  /** Streams. Default `"/api/sse"`. */
  readonly sse?: string | undefined;
  /** Channels. No default: calling a channel without it is `WS_PATH_NOT_CONFIGURED`. */
  readonly ws?: string | undefined;
}

/** Upload progress of a call, from 0 to 1. */
export interface UploadProgress {
  /** The share of the body sent, from 0 to 1. */
  readonly percent: number;
}

/** Parameters a channel's socket authenticates with, sent in its first frame. */
export type WSAuthParams = Record<string, unknown>;

/**
 * The options of the sockets a caller's channels open.
 *
 * @example
 * ```ts
 * createProxyCaller(routes, {
 *   proxyPath: { ws: "/api/ws" },
 *   ws: {
 *     auth: async () => ({ token: await session.token() }),
 *     heartbeat: { intervalMs: 20_000 },
 *   },
 * });
 * ```
 */
export interface CallerWSOptions {
  /**
   * Parameters for the hello frame of every connection: an object, or a function called afresh
   * before each connection (it may be async, and may give `undefined` for none). When it throws
   * or rejects, the channel ends with `ChannelError` kind `"auth"`.
   */
  readonly auth?:
    | WSAuthParams
    | (() => WSAuthParams | undefined | Promise<WSAuthParams | undefined>)
    | undefined;
  /**
   * Waits between reconnection attempts: attempt `n` waits `initialMs × factorⁿ⁻¹`, at most
   * `maxMs`, drawn at random in `[0, that]` when `jitter` is on. Defaults `initialMs: 500`,
   * `maxMs: 30000`, `factor: 2`, `jitter: true`. Reset only once a connection is stable: it
   * delivered a message, or stayed open 5000 ms; a socket that opens and closes at once keeps
   * the waits growing.
   */
  readonly backoff?:
    | {
        readonly initialMs?: number | undefined;
        readonly maxMs?: number | undefined;
        readonly factor?: number | undefined;
        readonly jitter?: boolean | undefined;
      }
    | undefined;
  /**
   * Application-level heartbeat (browsers cannot send WebSocket pings): every `intervalMs`
   * (default 30000) the channel sends `{"type":"courier.ping"}`; when nothing at all arrives
   * within `timeoutMs` (default 10000) after it, the connection is taken for dead, closed and
   * replaced. `intervalMs: 0` turns it off.
   */
  readonly heartbeat?:
    | {
        readonly intervalMs?: number | undefined;
        readonly timeoutMs?: number | undefined;
      }
    | undefined;
  /**
   * Bounds of the messages `send()` keeps while not connected: `maxCount` (default 1000)
   * messages and `maxBytes` (default 1048576) bytes of JSON. A message that does not fit is
   * refused with `ChannelError` kind `"queue-full"`.
   */
  readonly messageQueue?:
    | {
        readonly maxCount?: number | undefined;
        readonly maxBytes?: number | undefined;
      }
    | undefined;
  /** Subprotocols offered in the handshake (`new WebSocket(url, protocols)`). */
  readonly protocols?: readonly string[] | undefined;
  /**
   * The largest message in bytes of JSON, sent or received. Default 1048576. Sending a larger
   * one throws `ChannelError` kind `"too-large"`; receiving one closes the socket with 1009.
   */
  readonly maxMessageSize?: number | undefined;
}

/**
 * The options of the routes form, `createProxyCaller(routes, options)`. All optional.
 *
 * @example
 * ```ts
 * const caller = createProxyCaller(routes, {
 *   timeout: 10_000,
 *   headers: { "x-tenant": "acme" },
 *   onError: (error) => report(error),
 * });
 * ```
 */
export interface ProxyCallerOptions {
  /** Where the proxy routes are. Defaults `{ http: "/api/request", sse: "/api/sse" }`, no `ws`. */
  readonly proxyPath?: ProxyPath | undefined;
  /**
   * What relative proxy paths resolve against. Default: the page's `location.origin`. Needed
   * where there is no page (node, tests, workers with another origin).
   */
  readonly baseUrl?: string | undefined;
  /**
   * How long an HTTP call waits for the proxy, in milliseconds. Not sent to the proxy. A call
   * past it rejects with `HTTPError` status 0, code `TIMEOUT`. None by default.
   */
  readonly timeout?: number | undefined;
  /** Reads a newer call cancels while in flight (dotted paths). Default: the routes' own. */
  readonly cancelPrevious?: readonly string[] | undefined;
  /** Whether identical reads in flight reach the proxy once. Default: the routes' own, else `true`. */
  readonly coalesce?: boolean | undefined;
  /**
   * Every read cancels the call of the same endpoint still in flight (the older rejects with
   * status 499), as `cancelPrevious` does for the reads it lists. Default `false`.
   *
   * The routes and boundary forms only: the name-only form cannot tell a read from a write (and
   * a write is never cancelled), so `createProxyCaller` refuses `deduplicate: true` there with
   * `INVALID_OPTION`. List its reads in `cancelPrevious` instead, or give a `boundary`.
   */
  readonly deduplicate?: boolean | undefined;
  /**
   * The session's double-submit CSRF token: the cookie the page reads it from and the header
   * every POST repeats it in (unless the call sets that header itself). Default: the routes
   * record's `csrf`, which this replaces when given. The name-only form has no record, so it
   * sends the token only when given this. Both names must be RFC 9110 tokens, else
   * `createProxyCaller` throws `INVALID_OPTION` naming the field.
   *
   * @example
   * ```ts
   * createProxyCaller<Routes>("demo", { csrf: { cookie: "csrf_token", header: "x-csrf-token" } });
   * ```
   */
  readonly csrf?: CsrfNames | undefined;
  /** Whether the browser sends its cookies to the proxy, with calls and streams. Default `"include"`. */
  readonly credentials?: RequestCredentials | undefined;
  /** Headers for every call and stream, and in the first frame of every channel. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /**
   * Called with every {@link HTTPError} (status 0, 499, ≥ 400), once per call. What it throws
   * or rejects with is reported with `console.error` and does not change the call's outcome.
   */
  readonly onError?: ((error: HTTPError) => void | Promise<void>) | undefined;
  /**
   * Called with the data of every successful HTTP call, once per call. What it throws or
   * rejects with is reported with `console.error` and does not change the call's outcome.
   */
  readonly onSuccess?: ((data: unknown) => void | Promise<void>) | undefined;
  /** The options of the channels' sockets. */
  readonly ws?: CallerWSOptions | undefined;
}

/**
 * The defaults of the alternative form, `createProxyCaller(source, defaults)`: the routes
 * form's options and `boundary`.
 */
export interface ProxyCallerDefaults extends ProxyCallerOptions {
  /**
   * A record of the routes' shape written by `courier routes --boundary`: the exposed
   * endpoints, reads as GET unless listed in `sensitive`. With it the caller is the routes form
   * over the boundary, `source` naming the source. Without it, every call is an HTTP POST by
   * name.
   *
   * A TypeScript definition of the source cannot be given here instead: courier's definitions
   * are Rust. The boundary takes its place.
   */
  readonly boundary?: RoutesRecord | undefined;
}

/**
 * Options of one call, set with `.with(options)` on the client or any group (chainable; a
 * later `.with` wins, its `headers` merged over the earlier ones).
 *
 * @example
 * ```ts
 * await caller.users.with({ timeout: 2000, headers: { "x-trace": id } }).search({ q });
 * await caller.files.with({ onUploadProgress: ({ percent }) => bar(percent) }).upload(form);
 * ```
 */
export interface CallOptions {
  /**
   * Milliseconds: sent to the proxy as `_t` (the upstream call's deadline, every attempt the
   * proxy makes included, shortening the endpoint's own timeout, never lengthening it) and
   * bounds the local wait as the caller's `timeout` does.
   */
  readonly timeout?: number | undefined;
  /**
   * Aborts the call (rejecting with the signal's reason — an `AbortError` `DOMException` by
   * default, not an `HTTPError`), a stream (which ends) or a channel (which closes).
   */
  readonly signal?: AbortSignal | undefined;
  /** Forces the verb. The proxy refuses a write or a sensitive read over GET with 405. */
  readonly method?: "GET" | "POST" | undefined;
  /** Whether this read may share an identical call in flight. Default: the caller's. */
  readonly coalesce?: boolean | undefined;
  /** Headers merged over the caller's `headers` (a name given here replaces the caller's). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /**
   * Upload progress, from 0 to 1. The call then goes through `XMLHttpRequest`, as POST, and
   * resolves only after progress reached 1.
   */
  readonly onUploadProgress?: ((progress: UploadProgress) => void) | undefined;
  /** Overrides the caller's `credentials` for this call. */
  readonly credentials?: RequestCredentials | undefined;
}

/** A whole response, what `.raw` calls resolve to. */
export interface HttpResponse<T> {
  /** The HTTP status. */
  readonly status: number;
  /** The response's headers. */
  readonly headers: Headers;
  /** The parsed body (see the README's "Responses" for how). */
  readonly data: T;
}

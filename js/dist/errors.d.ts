/**
 * The errors of the proxy caller: classes with a stable `code`, `status` or `kind`, never
 * strings.
 *
 * - {@link HTTPError}: the call reached (or tried to reach) the proxy and did not succeed —
 *   a status ≥ 400, a network failure or a timeout (status 0), a read cancelled by a newer one
 *   (status 499).
 * - {@link ConfigurationError}: refused before anything was sent.
 * - {@link StreamError}: a stream that cannot go on (a courier `event: error` frame, a
 *   response that is not an event stream, an event whose data is not JSON).
 * - {@link ChannelError}: a channel closed for good, or a message `send()` refused.
 *
 * @module
 */
/** The body the proxy answers its own refusals with: `{"error":{"code":"…","message":"…"}}`. */
export interface ProxyErrorBody {
    /** What went wrong. */
    readonly error: {
        /** A stable code, e.g. `ENDPOINT_NOT_IN_ROUTES`, `TIMEOUT`, `NETWORK`, `CANCELLED`. */
        readonly code: string;
        /** A sentence for people. */
        readonly message: string;
    };
}
/**
 * A call that did not succeed: the response's `status` (≥ 400), `headers` and parsed `data`
 * — or a call that got no response:
 *
 * | `status` | `code` | when |
 * |---|---|---|
 * | 0 | `NETWORK` | the request failed on the network (no response) |
 * | 0 | `TIMEOUT` | no answer within the caller's or the call's `timeout` |
 * | 499 | `CANCELLED` | a newer call of the same endpoint cancelled this read (`cancelPrevious`, `deduplicate`) |
 * | ≥ 400 | the proxy's or the upstream's | the answer's status |
 *
 * For the first three `data` is `{ error: { code, message } }`, as the proxy's own refusals
 * are; {@link HTTPError.code} reads that code whatever its origin.
 *
 * @example
 * ```ts
 * try {
 *   await caller.users.get(7);
 * } catch (error) {
 *   if (error instanceof HTTPError && error.status === 404) showNotFound();
 *   else if (error instanceof HTTPError && error.code === "TIMEOUT") retryLater();
 *   else throw error;
 * }
 * ```
 */
export declare class HTTPError<T = unknown> extends Error {
    readonly name = "HTTPError";
    /** The HTTP status: the response's, or 0 (no response) or 499 (cancelled). */
    readonly status: number;
    /** The response's headers (empty when there was no response). */
    readonly headers: Headers;
    /** The response body, parsed as a successful one would be. */
    readonly data: T;
    /** The endpoint's dotted path, e.g. `users.get`. */
    readonly path: string | undefined;
    /**
     * @param status - the HTTP status (0 when no response came)
     * @param headers - the response's headers
     * @param data - the parsed body
     * @param path - the endpoint's dotted path
     * @param options - `cause`: the error behind a status 0
     */
    constructor(status: number, headers: Headers, data: T, path?: string, options?: {
        cause?: unknown;
    });
    /** `data.error.code` when the body has the proxy's error shape (always for status 0 and 499). */
    get code(): string | undefined;
}
/** @internal An HTTPError without a response: status 0 or 499 and the proxy's error shape. */
export declare function failure(status: number, code: string, message: string, path: string, cause?: unknown): HTTPError<ProxyErrorBody>;
/** The codes of {@link ConfigurationError}. */
export type ConfigurationErrorCode = 
/** The endpoint is not named by the routes (or has no group: a path is `group.endpoint`). */
"ENDPOINT_NOT_IN_ROUTES"
/** A channel was called and the caller has no `proxyPath.ws`. */
 | "WS_PATH_NOT_CONFIGURED"
/** The variables hold a Blob, an ArrayBuffer, a typed array, a DataView or a stream (or are not JSON at all). */
 | "PROXY_VARIABLE_NOT_SERIALIZABLE"
/** An option that cannot be used: a method other than GET and POST, a bad timeout, a proxy path that does not resolve. */
 | "INVALID_OPTION";
/**
 * A call refused before anything was sent, or options that cannot work.
 *
 * An HTTP call rejects its promise with it; a stream or channel call throws it at once (those
 * calls return their object synchronously); `createProxyCaller` throws it for bad options.
 *
 * @example
 * ```ts
 * await caller.users.avatar({ photo: file }).catch((error) => {
 *   // ConfigurationError PROXY_VARIABLE_NOT_SERIALIZABLE:
 *   // "`users.avatar`: variables.photo is a File; files go in a FormData"
 *   console.log(error.code, error.path, error.message);
 * });
 * ```
 */
export declare class ConfigurationError extends Error {
    readonly name = "ConfigurationError";
    /** What is wrong, as a stable code. */
    readonly code: ConfigurationErrorCode;
    /** The endpoint's dotted path, when the error is about one call. */
    readonly path: string | undefined;
    /**
     * @param code - the stable code
     * @param message - a sentence naming what is wrong and where
     * @param path - the endpoint's dotted path
     */
    constructor(code: ConfigurationErrorCode, message: string, path?: string);
}
/** What {@link StreamError} is about. */
export type StreamErrorKind = 
/** The server ended the stream with courier's `event: error` frame; `code` and `message` are its. */
"failed"
/** The answer is not an event stream (a status other than 200 and 204, another content type, an oversized line). */
 | "protocol"
/** An event's data is not JSON. */
 | "decode";
/**
 * A stream that cannot go on. Thrown from the stream's iteration (which then ends; the
 * connection is closed). A refused stream (status ≥ 400) throws {@link HTTPError} instead.
 *
 * @example
 * ```ts
 * try {
 *   for await (const event of caller.users.events()) render(event.data);
 * } catch (error) {
 *   if (error instanceof StreamError && error.kind === "failed") console.warn(error.code);
 * }
 * ```
 */
export declare class StreamError extends Error {
    readonly name = "StreamError";
    /** What went wrong. */
    readonly kind: StreamErrorKind;
    /** The server's code, for a `failed` stream (`STREAM_FAILED`, …). */
    readonly code: string | undefined;
    /** The endpoint's dotted path. */
    readonly path: string;
    /**
     * @param kind - what went wrong
     * @param message - a sentence
     * @param path - the endpoint's dotted path
     * @param options - `code`: the server's; `cause`: the error behind it
     */
    constructor(kind: StreamErrorKind, message: string, path: string, options?: {
        code?: string;
        cause?: unknown;
    });
}
/** What {@link ChannelError} is about. */
export type ChannelErrorKind = 
/** The channel was closed for good with a code that does not reconnect (`code`, `reason`), or `send()` on a closed channel. */
"closed"
/**
 * The proxy or the upstream refused the channel for good: close code 4400–4499, which is
 * 4000 + the refusal's HTTP status (`code`, `status`, `reason`, and `refusal` from the reason).
 */
 | "refused"
/** `send()` while disconnected and the queue of unsent messages is full (`ws.messageQueue`). */
 | "queue-full"
/** `send()` of a message over `ws.maxMessageSize` bytes of JSON. */
 | "too-large"
/** `send()` on a channel that only pushes (its route is not `bidirectional`). */
 | "push-only"
/** `send()` of a value that is not JSON (a cycle, a BigInt, `undefined`). */
 | "encode"
/** A received message that is not JSON (the socket is closed with 1003). */
 | "decode"
/** `ws.auth` threw or rejected, or gave something that is not an object. */
 | "auth";
/**
 * A channel that ended with an error (thrown from its iteration), or a message `send()`
 * refused (thrown by `send()`: nothing is ever dropped silently).
 *
 * A channel refused for good comes as kind `"refused"`: courier's proxy closes it with 4000 +
 * the refusal's HTTP status (4400 malformed address or variables, 4401 sign in, 4403
 * forbidden, 4404 not exposed or not found) and a reason `"CODE: message"`, read into
 * `status` and `refusal`. Retrying would not change it, so the channel does not reconnect.
 *
 * @example
 * ```ts
 * try {
 *   room.send({ text });
 * } catch (error) {
 *   if (error instanceof ChannelError && error.kind === "queue-full") showOffline();
 * }
 * try {
 *   for await (const message of room) show(message);
 * } catch (error) {
 *   if (error instanceof ChannelError && error.kind === "refused" && error.status === 401) signIn();
 * }
 * ```
 */
export declare class ChannelError extends Error {
    readonly name = "ChannelError";
    /** What went wrong. */
    readonly kind: ChannelErrorKind;
    /** The close code, for `closed` (1003, 1008, 1009, 4000–4999, …) and `refused` (4400–4499). */
    readonly code: number | undefined;
    /** The close reason, for `closed` and `refused`. */
    readonly reason: string | undefined;
    /** The refusal's HTTP status, for `refused`: `code` − 4000 (400, 401, 403, 404, …). */
    readonly status: number | undefined;
    /**
     * The proxy's refusal code, for `refused`: what comes before the first `": "` of the reason
     * (`UPSTREAM_REFUSED`, `ENDPOINT_NOT_IN_ROUTES`, …); `undefined` when the reason does not
     * start with such a code.
     */
    readonly refusal: string | undefined;
    /** The endpoint's dotted path. */
    readonly path: string;
    /**
     * @param kind - what went wrong
     * @param message - a sentence
     * @param path - the endpoint's dotted path
     * @param options - `code` and `reason` of a close; `status` and `refusal` of a refusal; `cause`
     */
    constructor(kind: ChannelErrorKind, message: string, path: string, options?: {
        code?: number;
        reason?: string;
        status?: number;
        refusal?: string | undefined;
        cause?: unknown;
    });
}

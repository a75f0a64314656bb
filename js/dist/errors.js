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
export class HTTPError extends Error {
    name = "HTTPError";
    /** The HTTP status: the response's, or 0 (no response) or 499 (cancelled). */
    status;
    /** The response's headers (empty when there was no response). */
    headers;
    /** The response body, parsed as a successful one would be. */
    data;
    /** The endpoint's dotted path, e.g. `users.get`. */
    path;
    /**
     * @param status - the HTTP status (0 when no response came)
     * @param headers - the response's headers
     * @param data - the parsed body
     * @param path - the endpoint's dotted path
     * @param options - `cause`: the error behind a status 0
     */
    constructor(status, headers, data, path, options) {
        super(describe(status, data, path), options);
        this.status = status;
        this.headers = headers;
        this.data = data;
        this.path = path;
    }
    /** `data.error.code` when the body has the proxy's error shape (always for status 0 and 499). */
    get code() {
        return errorBody(this.data)?.error.code;
    }
}
function errorBody(data) {
    if (typeof data !== "object" || data === null)
        return undefined;
    const error = data.error;
    if (typeof error !== "object" || error === null)
        return undefined;
    const { code, message } = error;
    if (typeof code !== "string")
        return undefined;
    return { error: { code, message: typeof message === "string" ? message : "" } };
}
function describe(status, data, path) {
    const at = path === undefined ? "" : `\`${path}\`: `;
    const body = errorBody(data);
    const what = body ? `${body.error.code}${body.error.message ? `: ${body.error.message}` : ""}` : "";
    if (status === 0)
        return `${at}${what || "no response"}`;
    return `${at}HTTP ${status}${what ? ` ${what}` : ""}`;
}
/** @internal An HTTPError without a response: status 0 or 499 and the proxy's error shape. */
export function failure(status, code, message, path, cause) {
    const data = { error: { code, message } };
    return new HTTPError(status, new Headers(), data, path, cause === undefined ? undefined : { cause });
}
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
export class ConfigurationError extends Error {
    name = "ConfigurationError";
    /** What is wrong, as a stable code. */
    code;
    /** The endpoint's dotted path, when the error is about one call. */
    path;
    /**
     * @param code - the stable code
     * @param message - a sentence naming what is wrong and where
     * @param path - the endpoint's dotted path
     */
    constructor(code, message, path) {
        super(message);
        this.code = code;
        this.path = path;
    }
}
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
export class StreamError extends Error {
    name = "StreamError";
    /** What went wrong. */
    kind;
    /** The server's code, for a `failed` stream (`STREAM_FAILED`, …). */
    code;
    /** The endpoint's dotted path. */
    path;
    /**
     * @param kind - what went wrong
     * @param message - a sentence
     * @param path - the endpoint's dotted path
     * @param options - `code`: the server's; `cause`: the error behind it
     */
    constructor(kind, message, path, options) {
        super(`\`${path}\`: ${message}`, options?.cause === undefined ? undefined : { cause: options.cause });
        this.kind = kind;
        this.code = options?.code;
        this.path = path;
    }
}
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
export class ChannelError extends Error {
    name = "ChannelError";
    /** What went wrong. */
    kind;
    /** The close code, for `closed` (1003, 1008, 1009, 4000–4999, …) and `refused` (4400–4499). */
    code;
    /** The close reason, for `closed` and `refused`. */
    reason;
    /** The refusal's HTTP status, for `refused`: `code` − 4000 (400, 401, 403, 404, …). */
    status;
    /**
     * The proxy's refusal code, for `refused`: what comes before the first `": "` of the reason
     * (`UPSTREAM_REFUSED`, `ENDPOINT_NOT_IN_ROUTES`, …); `undefined` when the reason does not
     * start with such a code.
     */
    refusal;
    /** The endpoint's dotted path. */
    path;
    /**
     * @param kind - what went wrong
     * @param message - a sentence
     * @param path - the endpoint's dotted path
     * @param options - `code` and `reason` of a close; `status` and `refusal` of a refusal; `cause`
     */
    constructor(kind, message, path, options) {
        super(`\`${path}\`: ${message}`, options?.cause === undefined ? undefined : { cause: options.cause });
        this.kind = kind;
        this.code = options?.code;
        this.reason = options?.reason;
        this.status = options?.status;
        this.refusal = options?.refusal;
        this.path = path;
    }
}
//# sourceMappingURL=errors.js.map
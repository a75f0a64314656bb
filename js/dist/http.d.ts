/**
 * HTTP calls through the proxy route: GET or POST, the request, and the life of a call in
 * flight — coalescing, cancel-previous, timeouts, the caller's signal and hooks.
 *
 * A call joins a *flight* (one request to the proxy). Identical reads in flight share one
 * flight; each call is a separate *waiter* on it, which a timeout, a signal or a newer call
 * can take off without touching the others. A flight nobody waits on any more is aborted.
 *
 * @module
 */
import type { Call, CallerState } from "./context.js";
/**
 * Calls an HTTP endpoint. Everything refused before sending (a `ConfigurationError`) comes
 * back as a rejected promise.
 */
export declare function callHttp(state: CallerState, call: Call): Promise<unknown>;
/** A timeout in milliseconds: a positive finite number, or `undefined`. */
export declare function checkTimeout(timeout: unknown, path: string | undefined, whose: string): number | undefined;

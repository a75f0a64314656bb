/**
 * What every call of one caller shares: its settings, read once from the routes and the
 * options, and the state of its calls in flight (for coalescing and cancel-previous).
 *
 * @module
 */
import type { CallOptions, CallerWSOptions, ProxyCallerOptions } from "./options.js";
import type { CsrfNames, RouteShape } from "./routes.js";
/** A caller's settings, resolved from the routes (or boundary) and the options. */
export interface Settings {
    readonly source: string;
    /** The routed endpoints; `undefined` for the name-only form (every call a POST). */
    readonly routes: ReadonlyMap<string, RouteShape> | undefined;
    readonly sensitive: ReadonlySet<string>;
    readonly cancelPrevious: ReadonlySet<string>;
    readonly deduplicate: boolean;
    readonly coalesce: boolean;
    readonly csrf: CsrfNames | undefined;
    readonly paths: {
        readonly http: string;
        readonly sse: string;
        readonly ws: string | undefined;
    };
    readonly baseUrl: string | undefined;
    readonly timeout: number | undefined;
    readonly credentials: RequestCredentials;
    readonly headers: Readonly<Record<string, string>>;
    readonly onError: ProxyCallerOptions["onError"];
    readonly onSuccess: ProxyCallerOptions["onSuccess"];
    readonly ws: CallerWSOptions;
}
/** One call being waited for; cancel-previous cancels it. */
export interface Pending {
    /** Rejects the call with status 499 (`CANCELLED`). */
    cancel(): void;
}
/** A caller: its settings and its calls in flight. */
export interface CallerState {
    readonly settings: Settings;
    /** Requests in flight that identical reads may share, by their identity. */
    readonly flights: Map<string, unknown>;
    /** The latest call in flight of each endpoint whose reads cancel the previous one. */
    readonly latest: Map<string, Pending>;
}
/** One call as the transports see it. */
export interface Call {
    /** The dotted path, `group.endpoint`. */
    readonly path: string;
    /** The group path (`_g`). */
    readonly group: string;
    /** The endpoint's name (`_m`). */
    readonly name: string;
    /** Its route; `undefined` in the name-only form. */
    readonly route: RouteShape | undefined;
    readonly variables: unknown;
    readonly options: CallOptions;
    /** Resolve to the whole response rather than its data. */
    readonly raw: boolean;
}
/** A proxy path as an absolute URL: against `baseUrl`, else the page's origin. */
export declare function resolveUrl(settings: Settings, path: string, endpoint: string): URL;
/** Adds the wire's `_s`, `_g`, `_m` to `url`. */
export declare function addAddress(url: URL, settings: Settings, call: Pick<Call, "group" | "name">): void;
/** The caller's headers with the call's own over them (a name given by the call replaces the caller's). */
export declare function mergeHeaders(settings: Settings, options: CallOptions): Headers;
/** Calls a user's hook; what it throws or rejects with is reported and never reaches the call. */
export declare function runHook<A>(hook: ((arg: A) => unknown) | undefined, arg: A, what: string): void;
/** Resolves after `ms`, or with `false` at once when `signal` aborts first. */
export declare function sleep(ms: number, signal: AbortSignal): Promise<boolean>;

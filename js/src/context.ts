/**
 * What every call of one caller shares: its settings, read once from the routes and the
 * options, and the state of its calls in flight (for coalescing and cancel-previous).
 *
 * @module
 */

import { ConfigurationError } from "./errors.js";
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
  readonly paths: { readonly http: string; readonly sse: string; readonly ws: string | undefined };
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
export function resolveUrl(settings: Settings, path: string, endpoint: string): URL {
  const base = settings.baseUrl ?? pageOrigin();
  try {
    return base === undefined ? new URL(path) : new URL(path, base);
  } catch {
    throw new ConfigurationError(
      "INVALID_OPTION",
      base === undefined
        ? `the proxy path \`${path}\` is relative and there is no page to resolve it against: give the caller a \`baseUrl\``
        : `the proxy path \`${path}\` does not resolve against \`${base}\``,
      endpoint,
    );
  }
}

function pageOrigin(): string | undefined {
  const location = (globalThis as { location?: { origin?: unknown } }).location;
  const origin = location?.origin;
  return typeof origin === "string" && origin !== "null" ? origin : undefined;
}

/** Adds the wire's `_s`, `_g`, `_m` to `url`. */
export function addAddress(url: URL, settings: Settings, call: Pick<Call, "group" | "name">): void {
  url.searchParams.append("_s", settings.source);
  url.searchParams.append("_g", call.group);
  url.searchParams.append("_m", call.name);
}

/** The caller's headers with the call's own over them (a name given by the call replaces the caller's). */
export function mergeHeaders(settings: Settings, options: CallOptions): Headers {
  const headers = new Headers(settings.headers);
  for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
  return headers;
}

/** Calls a user's hook; what it throws or rejects with is reported and never reaches the call. */
export function runHook<A>(hook: ((arg: A) => unknown) | undefined, arg: A, what: string): void {
  if (hook === undefined) return;
  const report = (error: unknown): void => console.error(`courier: the ${what} hook failed`, error);
  try {
    const result = hook(arg);
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === "function") {
      (result as PromiseLike<unknown>).then(undefined, report);
    }
  } catch (error) {
    report(error);
  }
}

/** Resolves after `ms`, or with `false` at once when `signal` aborts first. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve(false);
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve(!signal.aborted);
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

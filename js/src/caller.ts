/**
 * `createProxyCaller`: the client object — groups reached by name, endpoints called as
 * functions, `.raw` and `.with()` on the client and every group.
 *
 * The client is made of `Proxy` objects over functions: a member is a group, an endpoint, or
 * both (a function with members). Reading a name the routes do not have still gives a member,
 * so that calling it (from JavaScript, or past a cast) is refused with
 * `ENDPOINT_NOT_IN_ROUTES` rather than a `TypeError`; `then`, `toJSON` and the names of
 * `Function.prototype` are not members unless the routes name them.
 *
 * @module
 */

import type { Call, CallerState, Settings } from "./context.js";
import { checkCsrf } from "./csrf.js";
import { ConfigurationError } from "./errors.js";
import { callHttp, checkTimeout } from "./http.js";
import type { CallOptions, ProxyCallerDefaults, ProxyCallerOptions } from "./options.js";
import type { RouteShape, RoutesRecord } from "./routes.js";
import { openStream } from "./sse.js";
import type { InferClient, NameOnlyClient } from "./types.js";
import { openChannel } from "./ws.js";

/** The type argument of the name-only form when none is given: any path, everything `unknown`. */
export type AnyEndpoints = Record<string, { variables: unknown; response: unknown }>;

/**
 * Creates the browser's proxy caller.
 *
 * **The routes form**: from the routes module `courier routes --ts` wrote, fully typed with no
 * type arguments. Reads go as GET when their route says `get: true`; streams and channels are
 * available.
 *
 * @example
 * ```ts
 * import { createProxyCaller } from "courier-browser";
 * import { routes } from "./routes.js";
 *
 * const caller = createProxyCaller(routes, { proxyPath: { ws: "/api/ws" } });
 * const user = await caller.users.get(7);           // Promise<User>
 * const page = await caller.users.raw.search({ q }); // HttpResponse<User[]>
 * for await (const { data } of caller.users.events()) console.log(data.online);
 * ```
 *
 * @param routes - the routes record
 * @param options - see {@link ProxyCallerOptions}
 * @throws ConfigurationError `INVALID_OPTION` for a record or options that cannot work
 */
export function createProxyCaller<const R extends RoutesRecord>(routes: R, options?: ProxyCallerOptions): InferClient<R>;
/**
 * **The boundary form**: the routes form over a boundary record (`courier routes --boundary`:
 * the exposed endpoints, reads as GET unless listed in `sensitive`), `source` naming the source
 * on the wire. Typed from the boundary's type.
 *
 * @example
 * ```ts
 * import { boundary } from "./boundary.js";
 * const caller = createProxyCaller("demo", { boundary });
 * ```
 *
 * @param source - the name the server registered the source under
 * @param defaults - the options and the `boundary`
 */
export function createProxyCaller<const B extends RoutesRecord>(
  source: string,
  defaults: ProxyCallerDefaults & { readonly boundary: B },
): InferClient<B>;
/**
 * **The name-only form**: no record at run time; any `caller.a.b.c(variables)` calls endpoint
 * `c` of group `a.b`, always as POST. Streams and channels are not available (nothing tells
 * the caller what is one), nor coalescing; `cancelPrevious` applies to the paths it lists.
 * `deduplicate: true` is refused (it cannot tell the reads it would cancel from writes), and
 * the CSRF token is sent only when the options name it (`csrf`).
 * Type it with the routes' type (a type-only import keeps the record out of the bundle) or an
 * `Endpoints`-like interface; without a type argument every path is allowed and `unknown`.
 *
 * @example
 * ```ts
 * import type { Routes } from "./routes.js";
 * const caller = createProxyCaller<Routes>("demo", { csrf: { cookie: "csrf_token", header: "x-csrf-token" } });
 * await caller.users.create({ name: "Ada" });
 * ```
 *
 * @param source - the name the server registered the source under
 * @param defaults - the options (no `boundary`, no `deduplicate: true`)
 * @throws ConfigurationError `INVALID_OPTION` for options that cannot work, `deduplicate: true` among them
 */
export function createProxyCaller<A = AnyEndpoints>(
  source: string,
  defaults?: ProxyCallerDefaults & { readonly boundary?: undefined; readonly deduplicate?: false | undefined },
): NameOnlyClient<A>;
export function createProxyCaller(first: RoutesRecord | string, options?: ProxyCallerDefaults): unknown {
  const given = options ?? {};
  if (typeof given !== "object" || given === null) {
    throw new ConfigurationError("INVALID_OPTION", "the proxy caller's options must be an object");
  }
  let settings: Settings;
  if (typeof first === "string") {
    settings =
      given.boundary === undefined ? settingsOf(first, undefined, given) : settingsOf(first, given.boundary, given);
  } else {
    settings = settingsOf(undefined, first, given);
  }
  const state: CallerState = { settings, flights: new Map(), latest: new Map() };
  return node({ state, tree: treeOf(settings.routes) }, [], { raw: false, options: {} });
}

function settingsOf(source: string | undefined, record: RoutesRecord | undefined, options: ProxyCallerOptions): Settings {
  if (record !== undefined && (typeof record !== "object" || record === null)) {
    throw new ConfigurationError("INVALID_OPTION", "the routes record must be an object");
  }
  const name = source ?? record?.source;
  if (typeof name !== "string" || name === "") {
    throw new ConfigurationError("INVALID_OPTION", "the proxy caller needs the source's name (the routes record's `source`)");
  }
  const routes = record === undefined ? undefined : routesOf(record);
  const timeout = checkTimeout(options.timeout, undefined, "the caller's");
  const paths = options.proxyPath ?? {};
  return {
    source: name,
    routes,
    sensitive: new Set(record?.sensitive ?? []),
    cancelPrevious: new Set(options.cancelPrevious ?? record?.cancelPrevious ?? []),
    deduplicate: deduplicateOf(options, record),
    coalesce: options.coalesce ?? record?.coalesce ?? true,
    csrf: checkCsrf(options.csrf) ?? record?.csrf,
    paths: { http: paths.http ?? "/api/request", sse: paths.sse ?? "/api/sse", ws: paths.ws },
    baseUrl: options.baseUrl,
    timeout,
    credentials: options.credentials ?? "include",
    headers: { ...options.headers },
    onError: options.onError,
    onSuccess: options.onSuccess,
    ws: options.ws ?? {},
  };
}

/**
 * The `deduplicate` option. Refused in the name-only form: it cannot tell a read from a write,
 * and cancelling a write would lose it, so accepting it would do nothing while seeming to.
 */
function deduplicateOf(options: ProxyCallerOptions, record: RoutesRecord | undefined): boolean {
  const deduplicate = options.deduplicate ?? false;
  if (record === undefined && deduplicate !== false) {
    throw new ConfigurationError(
      "INVALID_OPTION",
      "`deduplicate` cannot work in the name-only form: without routes the caller cannot tell a read from a write, " +
        "and a write is never cancelled. List the reads in `cancelPrevious` (it applies in the name-only form to the paths it lists), " +
        "or give a `boundary`",
    );
  }
  return deduplicate;
}

/** The record's endpoints, each path and shape checked. */
function routesOf(record: RoutesRecord): Map<string, RouteShape> {
  const endpoints: unknown = record.endpoints;
  if (typeof endpoints !== "object" || endpoints === null) {
    throw new ConfigurationError("INVALID_OPTION", "the routes record has no `endpoints` object");
  }
  const routes = new Map<string, RouteShape>();
  for (const [path, shape] of Object.entries(endpoints as Record<string, unknown>)) {
    const segments = path.split(".");
    if (segments.length < 2 || segments.some((segment) => segment === "")) {
      throw new ConfigurationError(
        "INVALID_OPTION",
        `route \`${path}\` is not a path of the form \`group.endpoint\``,
        path,
      );
    }
    if (!isRouteShape(shape)) {
      throw new ConfigurationError(
        "INVALID_OPTION",
        `route \`${path}\` is not {"type": "query" | "mutation"} or {"transport": "sse" | "ws"}`,
        path,
      );
    }
    routes.set(path, shape);
  }
  return routes;
}

function isRouteShape(shape: unknown): shape is RouteShape {
  if (typeof shape !== "object" || shape === null) return false;
  const { type, transport } = shape as { type?: unknown; transport?: unknown };
  if (type !== undefined) return transport === undefined && (type === "query" || type === "mutation");
  return transport === "sse" || transport === "ws";
}

/** The names directly under each group path ("" for the root). */
type Tree = ReadonlyMap<string, ReadonlySet<string>>;

function treeOf(routes: ReadonlyMap<string, RouteShape> | undefined): Tree | undefined {
  if (routes === undefined) return undefined;
  const tree = new Map<string, Set<string>>();
  for (const path of routes.keys()) {
    const segments = path.split(".");
    for (let i = 0; i < segments.length; i++) {
      const parent = segments.slice(0, i).join(".");
      let names = tree.get(parent);
      if (names === undefined) tree.set(parent, (names = new Set()));
      names.add(segments[i]!);
    }
  }
  return tree;
}

interface Context {
  readonly state: CallerState;
  readonly tree: Tree | undefined;
}

/** How a client or group calls: whole responses or data, and with which options. */
interface View {
  readonly raw: boolean;
  readonly options: CallOptions;
}

function node(context: Context, segments: readonly string[], view: View): unknown {
  const children = new Map<string, unknown>();
  let raw: unknown;
  const target = (): void => undefined;
  const isMember = (name: string): boolean => {
    if (context.tree?.get(segments.join("."))?.has(name)) return true;
    return name !== "then" && name !== "toJSON" && !(name in Function.prototype);
  };
  const self: unknown = new Proxy(target, {
    get(_target, key) {
      if (typeof key === "symbol") return Reflect.get(target, key);
      if (key === "raw") {
        if (view.raw) return self;
        raw ??= node(context, segments, { raw: true, options: view.options });
        return raw;
      }
      if (key === "with") {
        return (options?: CallOptions) => node(context, segments, { raw: view.raw, options: mergeOptions(view.options, options) });
      }
      if (!isMember(key)) return Reflect.get(target, key);
      let child = children.get(key);
      if (child === undefined) children.set(key, (child = node(context, [...segments, key], view)));
      return child;
    },
    has(_target, key) {
      if (typeof key === "string" && (key === "raw" || key === "with" || context.tree?.get(segments.join("."))?.has(key))) {
        return true;
      }
      return Reflect.has(target, key);
    },
    apply(_target, _this, args: unknown[]) {
      return dispatch(context, segments, view, args[0]);
    },
  });
  return self;
}

function mergeOptions(earlier: CallOptions, later: CallOptions | undefined): CallOptions {
  if (later === undefined) return earlier;
  if (typeof later !== "object" || later === null) {
    throw new ConfigurationError("INVALID_OPTION", "`.with()` takes an object of call options");
  }
  const headers = earlier.headers === undefined && later.headers === undefined ? undefined : { ...earlier.headers, ...later.headers };
  return { ...earlier, ...later, ...(headers === undefined ? {} : { headers }) };
}

function dispatch(context: Context, segments: readonly string[], view: View, variables: unknown): unknown {
  const { settings } = context.state;
  const path = segments.join(".");
  const route = settings.routes?.get(path);
  if (settings.routes !== undefined && route === undefined) {
    return Promise.reject(
      new ConfigurationError(
        "ENDPOINT_NOT_IN_ROUTES",
        `\`${path}\` is not in the routes of source \`${settings.source}\`: mark it \`.expose(true)\` on the server ` +
          "(`expose = true` in courier.toml) and write the routes module again",
        path,
      ),
    );
  }
  if (segments.length < 2) {
    return Promise.reject(
      new ConfigurationError("ENDPOINT_NOT_IN_ROUTES", `\`${path}\` names no endpoint: a path is \`group.endpoint\``, path),
    );
  }
  const call: Call = {
    path,
    group: segments.slice(0, -1).join("."),
    name: segments[segments.length - 1]!,
    route,
    variables,
    options: view.options,
    raw: view.raw,
  };
  if (route !== undefined && "transport" in route) {
    return route.transport === "sse"
      ? openStream(context.state, call)
      : openChannel(context.state, call, route.bidirectional === true);
  }
  return callHttp(context.state, call);
}

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
import type { ProxyCallerDefaults, ProxyCallerOptions } from "./options.js";
import type { RoutesRecord } from "./routes.js";
import type { InferClient, NameOnlyClient } from "./types.js";
/** The type argument of the name-only form when none is given: any path, everything `unknown`. */
export type AnyEndpoints = Record<string, {
    variables: unknown;
    response: unknown;
}>;
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
export declare function createProxyCaller<const R extends RoutesRecord>(routes: R, options?: ProxyCallerOptions): InferClient<R>;
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
export declare function createProxyCaller<const B extends RoutesRecord>(source: string, defaults: ProxyCallerDefaults & {
    readonly boundary: B;
}): InferClient<B>;
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
export declare function createProxyCaller<A = AnyEndpoints>(source: string, defaults?: ProxyCallerDefaults & {
    readonly boundary?: undefined;
    readonly deduplicate?: false | undefined;
}): NameOnlyClient<A>;

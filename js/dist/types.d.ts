/**
 * The client's type, inferred from the routes record's type: dotted paths become nested
 * groups, each endpoint a function of its variables to its response (an HTTP call), an
 * {@link EventStream} (a stream) or a {@link Channel} (a channel).
 *
 * @module
 */
import type { CallOptions, HttpResponse } from "./options.js";
import type { RoutesRecord } from "./routes.js";
import type { EventStream } from "./sse.js";
import type { Channel } from "./ws.js";
/** Whether calls resolve to the data (`"data"`) or to the whole response (`"raw"`). */
export type ResponseMode = "data" | "raw";
/** What an endpoint's types are when nothing says: `unknown`. */
interface UnknownTypes {
    readonly variables: unknown;
    readonly response: unknown;
    readonly send: unknown;
}
/** The `Endpoints` interface a record carries in its `types`, or `{}`. */
type TypesOf<R> = R extends {
    readonly types?: infer T;
} ? NonNullable<T> : {};
/** Endpoint `P`'s types in record `R`. */
type TypesAt<R, P extends string> = P extends keyof TypesOf<R> ? TypesOf<R>[P] : UnknownTypes;
type VariablesAt<R, P extends string> = TypesAt<R, P> extends {
    readonly variables: infer V;
} ? V : unknown;
type ResponseAt<R, P extends string> = TypesAt<R, P> extends {
    readonly response: infer T;
} ? T : unknown;
type SendAt<R, P extends string> = TypesAt<R, P> extends {
    readonly send: infer S;
} ? S : unknown;
/**
 * An endpoint's parameters: none needed when it takes no variables (`null`, `undefined`,
 * `void`) or may be called without (`unknown`, a type with `undefined`), else the variables.
 */
export type VariablesParameter<V> = [V] extends [null | undefined | void] ? [variables?: V | undefined] : undefined extends V ? [variables?: V] : [variables: V];
type ShapeAt<R extends RoutesRecord, P extends string> = P extends keyof R["endpoints"] ? R["endpoints"][P] : never;
/** The function endpoint `P` of record `R` is, in mode `M`. */
export type EndpointFunction<R extends RoutesRecord, P extends string, M extends ResponseMode> = ShapeAt<R, P> extends {
    readonly transport: "sse";
} ? (...variables: VariablesParameter<VariablesAt<R, P>>) => EventStream<ResponseAt<R, P>> : ShapeAt<R, P> extends {
    readonly transport: "ws";
} ? (...variables: VariablesParameter<VariablesAt<R, P>>) => Channel<ResponseAt<R, P>, ShapeAt<R, P> extends {
    readonly bidirectional: true;
} ? SendAt<R, P> : never> : (...variables: VariablesParameter<VariablesAt<R, P>>) => Promise<M extends "raw" ? HttpResponse<ResponseAt<R, P>> : ResponseAt<R, P>>;
/** The names of the endpoints directly in a group whose paths below it are `S`. */
type EndpointNames<S extends string> = S extends `${string}.${string}` ? never : S;
/** The names of the groups directly in a group whose paths below it are `S`. */
type GroupNames<S extends string> = S extends `${infer Head}.${string}` ? Head : never;
/** The paths below group `N` of paths `S`. */
type Below<S extends string, N extends string> = S extends `${N}.${infer Rest}` ? Rest : never;
/** `.raw` and `.with()`, on the client and every group. */
export interface ViewMethods<Raw, Same> {
    /** The same client or group, its HTTP calls resolving to the whole {@link HttpResponse}. */
    readonly raw: Raw;
    /** The same client or group, its calls made with `options` (merged over earlier `.with`s). */
    with(options: CallOptions): Same;
}
/**
 * A group of record `R` at `Prefix` (its path and a dot), whose endpoints' paths below it are
 * `S`: its endpoints, its groups (a name may be both), `.raw` and `.with()`.
 */
export type GroupClient<R extends RoutesRecord, Prefix extends string, S extends string, M extends ResponseMode> = {
    readonly [N in Exclude<EndpointNames<S> | GroupNames<S>, "raw" | "with">]: (N extends EndpointNames<S> ? EndpointFunction<R, `${Prefix}${N}`, M> : unknown) & (N extends GroupNames<S> ? GroupClient<R, `${Prefix}${N}.`, Below<S, N>, M> : unknown);
} & ViewMethods<GroupClient<R, Prefix, S, "raw">, GroupClient<R, Prefix, S, M>>;
/** The dotted paths of record `R`. */
export type PathsOf<R extends RoutesRecord> = Extract<keyof R["endpoints"], string>;
/** The paths of record `R` that are HTTP endpoints (reads and writes). */
export type HttpPathsOf<R extends RoutesRecord> = {
    [P in PathsOf<R>]: R["endpoints"][P] extends {
        readonly type: string;
    } ? P : never;
}[PathsOf<R>];
/**
 * A client whose paths are not known to the types (a record typed as plain
 * {@link RoutesRecord}, or the name-only form without a type argument): any
 * `client.group.endpoint()` compiles, its variables and response `unknown`. (Its members come
 * from an index signature: under `noUncheckedIndexedAccess` each one is possibly `undefined`.
 * Type the client to avoid that.)
 */
export type UntypedClient<M extends ResponseMode = "data"> = ViewMethods<UntypedClient<"raw">, UntypedClient<M>> & UntypedMembers<M>;
/** The members of an untyped client or group: any name. */
export interface UntypedMembers<M extends ResponseMode> {
    readonly [name: string]: UntypedNode<M>;
}
/** An untyped member called as an endpoint. */
export interface UntypedEndpoint<M extends ResponseMode> {
    (variables?: unknown): Promise<M extends "raw" ? HttpResponse<unknown> : unknown>;
}
/** A member of an {@link UntypedClient}: callable as an endpoint, readable as a group. */
export type UntypedNode<M extends ResponseMode> = ViewMethods<UntypedNode<"raw">, UntypedNode<M>> & UntypedEndpoint<M> & UntypedMembers<M>;
/** The client of the paths `S` of record `R`. */
type ClientOver<R extends RoutesRecord, S extends string, M extends ResponseMode> = string extends S ? UntypedClient<M> : GroupClient<R, "", S, M>;
/** An `Endpoints`-like interface (`{ "users.get": { variables; response } }`) as a record of HTTP routes. */
export type EndpointsAsRoutes<E> = {
    readonly source: string;
    readonly endpoints: {
        readonly [P in keyof E]: E[P] extends {
            readonly send: unknown;
        } ? {
            readonly transport: "ws";
        } : {
            readonly type: "query";
        };
    };
    readonly types?: E & object;
};
/**
 * The client of `A`: a routes record's type (`typeof routes`, every routed endpoint: calls,
 * streams, channels), or an `Endpoints`-like interface (its HTTP endpoints: an entry with
 * `send` is a channel and left out; streams cannot be told from calls by their types alone,
 * so prefer the record's type).
 *
 * @example
 * ```ts
 * import { routes } from "./routes.js";
 * type Client = InferClient<typeof routes>;
 * const caller: Client = createProxyCaller(routes);
 * ```
 */
export type InferClient<A, M extends ResponseMode = "data"> = A extends RoutesRecord ? ClientOver<A, PathsOf<A>, M> : ClientOver<EndpointsAsRoutes<A>, HttpPathsOf<EndpointsAsRoutes<A>>, M>;
/**
 * The client of the name-only form, `createProxyCaller<A>(source)`: `A`'s HTTP endpoints only
 * (with no record at run time the caller cannot know what is a stream or a channel; every call
 * is a POST).
 */
export type NameOnlyClient<A, M extends ResponseMode = "data"> = A extends RoutesRecord ? ClientOver<A, HttpPathsOf<A>, M> : InferClient<A, M>;
export {};

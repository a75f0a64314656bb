/**
 * The routes record: what `courier routes --ts` writes (or a hand-written record of the same
 * shape), the input of {@link createProxyCaller}.
 *
 * @module
 */

/**
 * How one endpoint is reached through the proxy.
 *
 * | shape | meaning |
 * |---|---|
 * | `{ type: "query", get: true }` | a read sent as GET (it is cached and its variables are not sensitive) |
 * | `{ type: "query" }` | a read sent as POST |
 * | `{ type: "mutation" }` | a write, always POST, never shared or cancelled |
 * | `{ type: "mutation", idempotencyKey: true }` | a write that carries an `idempotency-key` header made for each call, which the proxy passes on so that its retries upstream are applied once |
 * | `{ transport: "sse" }` | a server-sent event stream |
 * | `{ transport: "ws", bidirectional: true }` | a channel the page also sends on (without `bidirectional`: it only pushes) |
 */
export type RouteShape =
  | { readonly type: "query"; readonly get?: true }
  | { readonly type: "mutation"; readonly idempotencyKey?: true }
  | { readonly transport: "sse" }
  | { readonly transport: "ws"; readonly bidirectional?: true };

/** Where a page finds the session's double-submit CSRF token, and the header a POST repeats it in. */
export interface CsrfNames {
  /** The cookie holding the token (readable by the page). */
  readonly cookie: string;
  /** The header every POST call carries it in. */
  readonly header: string;
}

/**
 * One endpoint's types, as the generated `Endpoints` interface gives them: what it is called
 * with, what it answers, and (for a two-way channel) what the page sends on it.
 * `variables: null` means the endpoint takes no variables.
 */
export interface EndpointTypes {
  /** The variables; `null` (or `undefined`/`void`) for none. */
  readonly variables: unknown;
  /** The response of a call, the data of a stream's event, a channel's message. */
  readonly response: unknown;
  /** What a two-way channel takes. */
  readonly send?: unknown;
}

/**
 * The routes record, as `courier routes --ts` writes it:
 *
 * ```ts
 * const record = {
 *   "source": "demo",
 *   "endpoints": {
 *     "users.get": { "type": "query", "get": true },
 *     "users.create": { "type": "mutation" },
 *     "users.events": { "transport": "sse" },
 *     "chat.room": { "transport": "ws", "bidirectional": true }
 *   },
 *   "cancelPrevious": ["users.search"],
 *   "coalesce": true
 * } as const;
 * export interface Endpoints {
 *   "users.get": { variables: number; response: User };
 *   // …
 * }
 * export const routes: typeof record & { readonly types?: Endpoints } = record;
 * ```
 *
 * `types` is never present at run time: it carries the endpoints' types to `tsc`. A record
 * written by hand works as well (`as const` or `satisfies RoutesRecord`, so its shapes keep
 * their literal types); without `types`, every variables and response is `unknown`.
 */
export interface RoutesRecord {
  /** The name the server registered the source under (the wire's `_s`). */
  readonly source: string;
  /** Each endpoint a page may call, by dotted path (`group.endpoint`, `outer.inner.endpoint`). */
  readonly endpoints: { readonly [path: string]: RouteShape };
  /** The source's own `cancelPrevious`: reads a newer call cancels while in flight. */
  readonly cancelPrevious?: readonly string[];
  /** The source's own `coalesce`. */
  readonly coalesce?: boolean;
  /** Reads whose variables are sensitive: never sent as GET (a boundary record lists them). */
  readonly sensitive?: readonly string[];
  /** The session's double-submit CSRF token, when it has one. */
  readonly csrf?: CsrfNames;
  /** Type-level only: the generated `Endpoints` interface. */
  readonly types?: object;
}

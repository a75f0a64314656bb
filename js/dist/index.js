/**
 * courier-browser: the browser's proxy caller for courier.
 *
 * Calls, streams and channels of an API declared in Rust, sent through the app server's proxy
 * route (`courier_server::Proxy`), typed from the routes module `courier routes --ts` writes.
 *
 * ```ts
 * import { createProxyCaller, HTTPError } from "courier-browser";
 * import { routes } from "./routes.js";
 *
 * const caller = createProxyCaller(routes);
 * const user = await caller.users.get(7);
 * ```
 *
 * @packageDocumentation
 */
export { createProxyCaller } from "./caller.js";
export { ChannelError, ConfigurationError, HTTPError, StreamError } from "./errors.js";
//# sourceMappingURL=index.js.map
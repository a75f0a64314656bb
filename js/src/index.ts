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
export type { AnyEndpoints } from "./caller.js";
export { ChannelError, ConfigurationError, HTTPError, StreamError } from "./errors.js";
export type {
  ChannelErrorKind,
  ConfigurationErrorCode,
  ProxyErrorBody,
  StreamErrorKind,
} from "./errors.js";
export type {
  CallOptions,
  CallerWSOptions,
  HttpResponse,
  ProxyCallerDefaults,
  ProxyCallerOptions,
  ProxyPath,
  UploadProgress,
  WSAuthParams,
} from "./options.js";
export type { CsrfNames, EndpointTypes, RouteShape, RoutesRecord } from "./routes.js";
export type { EventStream, StreamEvent } from "./sse.js";
export type {
  EndpointFunction,
  EndpointsAsRoutes,
  GroupClient,
  HttpPathsOf,
  InferClient,
  NameOnlyClient,
  PathsOf,
  ResponseMode,
  UntypedClient,
  UntypedEndpoint,
  UntypedMembers,
  UntypedNode,
  VariablesParameter,
  ViewMethods,
} from "./types.js";
export type { Channel, ChannelState, DuplexChannel, PushChannel } from "./ws.js";

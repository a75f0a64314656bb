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
import { checkCsrf } from "./csrf.js";
import { ConfigurationError } from "./errors.js";
import { callHttp, checkTimeout } from "./http.js";
import { openStream } from "./sse.js";
import { openChannel } from "./ws.js";
export function createProxyCaller(first, options) {
    const given = options ?? {};
    if (typeof given !== "object" || given === null) {
        throw new ConfigurationError("INVALID_OPTION", "the proxy caller's options must be an object");
    }
    let settings;
    if (typeof first === "string") {
        settings =
            given.boundary === undefined ? settingsOf(first, undefined, given) : settingsOf(first, given.boundary, given);
    }
    else {
        settings = settingsOf(undefined, first, given);
    }
    const state = { settings, flights: new Map(), latest: new Map() };
    return node({ state, tree: treeOf(settings.routes) }, [], { raw: false, options: {} });
}
function settingsOf(source, record, options) {
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
function deduplicateOf(options, record) {
    const deduplicate = options.deduplicate ?? false;
    if (record === undefined && deduplicate !== false) {
        throw new ConfigurationError("INVALID_OPTION", "`deduplicate` cannot work in the name-only form: without routes the caller cannot tell a read from a write, " +
            "and a write is never cancelled. List the reads in `cancelPrevious` (it applies in the name-only form to the paths it lists), " +
            "or give a `boundary`");
    }
    return deduplicate;
}
/** The record's endpoints, each path and shape checked. */
function routesOf(record) {
    const endpoints = record.endpoints;
    if (typeof endpoints !== "object" || endpoints === null) {
        throw new ConfigurationError("INVALID_OPTION", "the routes record has no `endpoints` object");
    }
    const routes = new Map();
    for (const [path, shape] of Object.entries(endpoints)) {
        const segments = path.split(".");
        if (segments.length < 2 || segments.some((segment) => segment === "")) {
            throw new ConfigurationError("INVALID_OPTION", `route \`${path}\` is not a path of the form \`group.endpoint\``, path);
        }
        if (!isRouteShape(shape)) {
            throw new ConfigurationError("INVALID_OPTION", `route \`${path}\` is not {"type": "query" | "mutation"} or {"transport": "sse" | "ws"}`, path);
        }
        routes.set(path, shape);
    }
    return routes;
}
function isRouteShape(shape) {
    if (typeof shape !== "object" || shape === null)
        return false;
    const { type, transport } = shape;
    if (type !== undefined)
        return transport === undefined && (type === "query" || type === "mutation");
    return transport === "sse" || transport === "ws";
}
function treeOf(routes) {
    if (routes === undefined)
        return undefined;
    const tree = new Map();
    for (const path of routes.keys()) {
        const segments = path.split(".");
        for (let i = 0; i < segments.length; i++) {
            const parent = segments.slice(0, i).join(".");
            let names = tree.get(parent);
            if (names === undefined)
                tree.set(parent, (names = new Set()));
            names.add(segments[i]);
        }
    }
    return tree;
}
function node(context, segments, view) {
    const children = new Map();
    let raw;
    const target = () => undefined;
    const isMember = (name) => {
        if (context.tree?.get(segments.join("."))?.has(name))
            return true;
        return name !== "then" && name !== "toJSON" && !(name in Function.prototype);
    };
    const self = new Proxy(target, {
        get(_target, key) {
            if (typeof key === "symbol")
                return Reflect.get(target, key);
            if (key === "raw") {
                if (view.raw)
                    return self;
                raw ??= node(context, segments, { raw: true, options: view.options });
                return raw;
            }
            if (key === "with") {
                return (options) => node(context, segments, { raw: view.raw, options: mergeOptions(view.options, options) });
            }
            if (!isMember(key))
                return Reflect.get(target, key);
            let child = children.get(key);
            if (child === undefined)
                children.set(key, (child = node(context, [...segments, key], view)));
            return child;
        },
        has(_target, key) {
            if (typeof key === "string" && (key === "raw" || key === "with" || context.tree?.get(segments.join("."))?.has(key))) {
                return true;
            }
            return Reflect.has(target, key);
        },
        apply(_target, _this, args) {
            return dispatch(context, segments, view, args[0]);
        },
    });
    return self;
}
function mergeOptions(earlier, later) {
    if (later === undefined)
        return earlier;
    if (typeof later !== "object" || later === null) {
        throw new ConfigurationError("INVALID_OPTION", "`.with()` takes an object of call options");
    }
    const headers = earlier.headers === undefined && later.headers === undefined ? undefined : { ...earlier.headers, ...later.headers };
    return { ...earlier, ...later, ...(headers === undefined ? {} : { headers }) };
}
function dispatch(context, segments, view, variables) {
    const { settings } = context.state;
    const path = segments.join(".");
    const route = settings.routes?.get(path);
    if (settings.routes !== undefined && route === undefined) {
        return Promise.reject(new ConfigurationError("ENDPOINT_NOT_IN_ROUTES", `\`${path}\` is not in the routes of source \`${settings.source}\`: mark it \`.expose(true)\` on the server ` +
            "(`expose = true` in courier.toml) and write the routes module again", path));
    }
    if (segments.length < 2) {
        return Promise.reject(new ConfigurationError("ENDPOINT_NOT_IN_ROUTES", `\`${path}\` names no endpoint: a path is \`group.endpoint\``, path));
    }
    const call = {
        path,
        group: segments.slice(0, -1).join("."),
        name: segments[segments.length - 1],
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
//# sourceMappingURL=caller.js.map
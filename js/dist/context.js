/**
 * What every call of one caller shares: its settings, read once from the routes and the
 * options, and the state of its calls in flight (for coalescing and cancel-previous).
 *
 * @module
 */
import { ConfigurationError } from "./errors.js";
/** A proxy path as an absolute URL: against `baseUrl`, else the page's origin. */
export function resolveUrl(settings, path, endpoint) {
    const base = settings.baseUrl ?? pageOrigin();
    try {
        return base === undefined ? new URL(path) : new URL(path, base);
    }
    catch {
        throw new ConfigurationError("INVALID_OPTION", base === undefined
            ? `the proxy path \`${path}\` is relative and there is no page to resolve it against: give the caller a \`baseUrl\``
            : `the proxy path \`${path}\` does not resolve against \`${base}\``, endpoint);
    }
}
function pageOrigin() {
    const location = globalThis.location;
    const origin = location?.origin;
    return typeof origin === "string" && origin !== "null" ? origin : undefined;
}
/** Adds the wire's `_s`, `_g`, `_m` to `url`. */
export function addAddress(url, settings, call) {
    url.searchParams.append("_s", settings.source);
    url.searchParams.append("_g", call.group);
    url.searchParams.append("_m", call.name);
}
/** The caller's headers with the call's own over them (a name given by the call replaces the caller's). */
export function mergeHeaders(settings, options) {
    const headers = new Headers(settings.headers);
    for (const [name, value] of Object.entries(options.headers ?? {}))
        headers.set(name, value);
    return headers;
}
/** Calls a user's hook; what it throws or rejects with is reported and never reaches the call. */
export function runHook(hook, arg, what) {
    if (hook === undefined)
        return;
    const report = (error) => console.error(`courier: the ${what} hook failed`, error);
    try {
        const result = hook(arg);
        if (typeof result?.then === "function") {
            result.then(undefined, report);
        }
    }
    catch (error) {
        report(error);
    }
}
/** Resolves after `ms`, or with `false` at once when `signal` aborts first. */
export function sleep(ms, signal) {
    return new Promise((resolve) => {
        if (signal.aborted) {
            resolve(false);
            return;
        }
        const done = () => {
            clearTimeout(timer);
            signal.removeEventListener("abort", done);
            resolve(!signal.aborted);
        };
        const timer = setTimeout(done, ms);
        signal.addEventListener("abort", done, { once: true });
    });
}
//# sourceMappingURL=context.js.map
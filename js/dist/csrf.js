/**
 * The session's double-submit CSRF token: where a page reads it (a cookie) and the header every
 * POST repeats it in. The names come from the caller's `csrf` option, else the routes record's.
 *
 * @module
 */
import { ConfigurationError } from "./errors.js";
/** An RFC 9110 token: what a header name is, and (RFC 6265) what a cookie name is. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * The caller's `csrf` option, checked: `undefined`, or an object with a `cookie` and a `header`
 * that are both tokens.
 *
 * @throws ConfigurationError `INVALID_OPTION` naming the field that is wrong
 */
export function checkCsrf(csrf) {
    if (csrf === undefined)
        return undefined;
    if (typeof csrf !== "object" || csrf === null || Array.isArray(csrf)) {
        throw new ConfigurationError("INVALID_OPTION", "the caller's `csrf` must be an object `{ cookie, header }`");
    }
    const { cookie, header } = csrf;
    if (typeof cookie !== "string" || !TOKEN.test(cookie)) {
        throw new ConfigurationError("INVALID_OPTION", `the caller's \`csrf.cookie\` must be a cookie name (an RFC 9110 token), not ${shown(cookie)}`);
    }
    if (typeof header !== "string" || !TOKEN.test(header)) {
        throw new ConfigurationError("INVALID_OPTION", `the caller's \`csrf.header\` must be an HTTP header name (an RFC 9110 token), not ${shown(header)}`);
    }
    return { cookie, header };
}
function shown(value) {
    return typeof value === "string" ? JSON.stringify(value) : value === null ? "null" : typeof value;
}
/**
 * Puts the token in its header, when the page has the cookie and the call did not set the
 * header itself.
 */
export function addCsrfToken(headers, csrf) {
    if (csrf === undefined || headers.has(csrf.header))
        return;
    const token = readCookie(csrf.cookie);
    if (token !== undefined)
        headers.set(csrf.header, token);
}
/** The value of cookie `name` in `document.cookie`, decoded; `undefined` without a page or the cookie. */
export function readCookie(name) {
    let cookies;
    try {
        cookies = globalThis.document?.cookie;
    }
    catch {
        // A sandboxed document refuses access to its cookies.
        return undefined;
    }
    if (typeof cookies !== "string")
        return undefined;
    for (const part of cookies.split(";")) {
        const eq = part.indexOf("=");
        if (eq < 0 || part.slice(0, eq).trim() !== name)
            continue;
        const value = part.slice(eq + 1).trim();
        try {
            return decodeURIComponent(value);
        }
        catch {
            return value;
        }
    }
    return undefined;
}
//# sourceMappingURL=csrf.js.map
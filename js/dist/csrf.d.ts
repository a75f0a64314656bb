/**
 * The session's double-submit CSRF token: where a page reads it (a cookie) and the header every
 * POST repeats it in. The names come from the caller's `csrf` option, else the routes record's.
 *
 * @module
 */
import type { CsrfNames } from "./routes.js";
/**
 * The caller's `csrf` option, checked: `undefined`, or an object with a `cookie` and a `header`
 * that are both tokens.
 *
 * @throws ConfigurationError `INVALID_OPTION` naming the field that is wrong
 */
export declare function checkCsrf(csrf: unknown): CsrfNames | undefined;
/**
 * Puts the token in its header, when the page has the cookie and the call did not set the
 * header itself.
 */
export declare function addCsrfToken(headers: Headers, csrf: CsrfNames | undefined): void;
/** The value of cookie `name` in `document.cookie`, decoded; `undefined` without a page or the cookie. */
export declare function readCookie(name: string): string | undefined;

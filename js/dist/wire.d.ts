/**
 * The proxy route's wire: what variables may travel, how they are written, and how a response
 * body is read.
 *
 * @module
 */
import { ConfigurationError } from "./errors.js";
/** The longest address a read is sent as GET with, 2 KB; a longer one goes as POST. */
export declare const MAX_GET_ADDRESS = 2048;
/** Whether `value` is a `FormData` (the runtime may have none). */
export declare function isFormData(value: unknown): value is FormData;
/**
 * `form` with its text fields before its files: the proxy reads the fields that come before the
 * first file (they may fill the address) and hands the rest to the upstream as it arrives. A form
 * already in that order is sent as it is; another is copied (its files by reference), each kind in
 * its own order.
 */
export declare function textsFirst(form: FormData): FormData;
/**
 * `PROXY_VARIABLE_NOT_SERIALIZABLE` when the variables hold a value JSON cannot carry — a
 * Blob (or File), an ArrayBuffer, a typed array or DataView, a ReadableStream, or a FormData
 * anywhere but at the top — naming where; `undefined` when they may travel.
 */
export declare function checkVariables(path: string, variables: unknown): ConfigurationError | undefined;
/**
 * The variables as the wire's JSON text; `undefined` when there are none (`undefined` or
 * `null`). Values JSON cannot write (a cycle, a BigInt) are `PROXY_VARIABLE_NOT_SERIALIZABLE`.
 */
export declare function variablesJson(path: string, variables: unknown): string | undefined;
/** A request to the proxy, ready to send. */
export interface ProxyRequest {
    readonly method: "GET" | "POST";
    readonly url: string;
    readonly headers: Headers;
    readonly body: string | FormData | undefined;
    readonly credentials: RequestCredentials;
}
/** A response as it came: status, headers and the whole body. Shared by coalesced calls. */
export interface RawResponse {
    readonly status: number;
    readonly headers: Headers;
    readonly body: ArrayBuffer;
}
/** The media type of a `content-type` value: lower case, without parameters. */
export declare function mediaType(headers: Headers): string;
/**
 * A response body's value, by its content type (the routes form's rule, as the Rust caller):
 *
 * | body | value |
 * |---|---|
 * | empty, or status 204 | `null` |
 * | `application/json`, `*+json` | `JSON.parse` (a body that does not parse throws `SyntaxError`) |
 * | no content type | `JSON.parse`, else the text |
 * | `text/*` | the text (decoded by its `charset`, UTF-8 by default) |
 * | `application/x-www-form-urlencoded` | a plain object of its pairs, read as courier reads a query: a repeated name or a trailing `[]` makes an array, `a[b]=1` makes `{ a: { b: "1" } }`; every value a string |
 * | anything else | a `Blob` of that type |
 *
 * Each call gets its own value, so coalesced callers never share a mutable object.
 */
export declare function decodeBody(response: RawResponse): unknown;
/** An error response's value: as {@link decodeBody}, and the text when a JSON body does not parse. */
export declare function decodeErrorBody(response: RawResponse): unknown;
/** A URL-encoded body as courier's Rust side reads it back (`encode::search::parse`), leniently. */
export declare function parseForm(body: string): Record<string, unknown>;
/** The UTF-8 length of `text`, without encoding it. */
export declare function utf8Length(text: string): number;

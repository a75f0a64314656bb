/**
 * The proxy route's wire: what variables may travel, how they are written, and how a response
 * body is read.
 *
 * @module
 */

import { ConfigurationError } from "./errors.js";

/** The longest address a read is sent as GET with, 2 KB; a longer one goes as POST. */
export const MAX_GET_ADDRESS = 2048;

/** Whether `value` is a `FormData` (the runtime may have none). */
export function isFormData(value: unknown): value is FormData {
  return typeof FormData !== "undefined" && value instanceof FormData;
}

/**
 * `form` with its text fields before its files: the proxy reads the fields that come before the
 * first file (they may fill the address) and hands the rest to the upstream as it arrives. A form
 * already in that order is sent as it is; another is copied (its files by reference), each kind in
 * its own order.
 */
export function textsFirst(form: FormData): FormData {
  const entries = [...form.entries()];
  const firstFile = entries.findIndex(([, value]) => typeof value !== "string");
  if (firstFile === -1 || entries.slice(firstFile).every(([, value]) => typeof value !== "string")) return form;
  const ordered = new FormData();
  for (const [name, value] of entries) if (typeof value === "string") ordered.append(name, value);
  for (const [name, value] of entries) if (typeof value !== "string") ordered.append(name, value);
  return ordered;
}

/**
 * `PROXY_VARIABLE_NOT_SERIALIZABLE` when the variables hold a value JSON cannot carry — a
 * Blob (or File), an ArrayBuffer, a typed array or DataView, a ReadableStream, or a FormData
 * anywhere but at the top — naming where; `undefined` when they may travel.
 */
export function checkVariables(path: string, variables: unknown): ConfigurationError | undefined {
  if (isFormData(variables)) return undefined;
  const found = findBinary(variables, "variables", new Set());
  if (found === undefined) return undefined;
  const advice = found.what === "FormData" ? "a FormData must be the variables themselves" : "files go in a FormData";
  return new ConfigurationError(
    "PROXY_VARIABLE_NOT_SERIALIZABLE",
    `\`${path}\`: ${found.where} is ${article(found.what)} ${found.what}; ${advice}`,
    path,
  );
}

function article(word: string): string {
  // "a Uint8Array" (you-), "an Int8Array", "an ArrayBuffer".
  return /^[AEIO]/.test(word) ? "an" : "a";
}

function findBinary(value: unknown, where: string, seen: Set<object>): { where: string; what: string } | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const what = binaryKind(value);
  if (what !== undefined) return { where, what };
  if (seen.has(value)) return undefined;
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findBinary(value[i], `${where}[${i}]`, seen);
      if (found) return found;
    }
    return undefined;
  }
  // An object with its own JSON form (a Date) travels as that form.
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return undefined;
  for (const key of Object.keys(value)) {
    const found = findBinary((value as Record<string, unknown>)[key], member(where, key), seen);
    if (found) return found;
  }
  return undefined;
}

function member(where: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${where}.${key}` : `${where}[${JSON.stringify(key)}]`;
}

function binaryKind(value: object): string | undefined {
  if (typeof Blob !== "undefined" && value instanceof Blob) {
    return typeof File !== "undefined" && value instanceof File ? "File" : "Blob";
  }
  if (value instanceof ArrayBuffer) return "ArrayBuffer";
  if (typeof SharedArrayBuffer !== "undefined" && value instanceof SharedArrayBuffer) return "SharedArrayBuffer";
  if (ArrayBuffer.isView(value)) return value.constructor?.name || "typed array";
  if (typeof ReadableStream !== "undefined" && value instanceof ReadableStream) return "ReadableStream";
  if (isFormData(value)) return "FormData";
  return undefined;
}

/**
 * The variables as the wire's JSON text; `undefined` when there are none (`undefined` or
 * `null`). Values JSON cannot write (a cycle, a BigInt) are `PROXY_VARIABLE_NOT_SERIALIZABLE`.
 */
export function variablesJson(path: string, variables: unknown): string | undefined {
  if (variables === undefined || variables === null) return undefined;
  let json: string | undefined;
  try {
    json = JSON.stringify(variables);
  } catch (error) {
    throw new ConfigurationError(
      "PROXY_VARIABLE_NOT_SERIALIZABLE",
      `\`${path}\`: the variables are not JSON: ${error instanceof Error ? error.message : String(error)}`,
      path,
    );
  }
  if (json === undefined) {
    throw new ConfigurationError(
      "PROXY_VARIABLE_NOT_SERIALIZABLE",
      `\`${path}\`: the variables are ${typeof variables}, which JSON cannot carry`,
      path,
    );
  }
  return json;
}

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
export function mediaType(headers: Headers): string {
  return (headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

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
export function decodeBody(response: RawResponse): unknown {
  if (response.status === 204 || response.body.byteLength === 0) return null;
  const kind = mediaType(response.headers);
  if (kind === "application/json" || kind.endsWith("+json")) return JSON.parse(text(response));
  if (kind === "") {
    const body = text(response);
    try {
      return JSON.parse(body);
    } catch {
      return body;
    }
  }
  if (kind.startsWith("text/")) return text(response);
  if (kind === "application/x-www-form-urlencoded") return parseForm(text(response));
  return new Blob([response.body], { type: response.headers.get("content-type") ?? kind });
}

/** An error response's value: as {@link decodeBody}, and the text when a JSON body does not parse. */
export function decodeErrorBody(response: RawResponse): unknown {
  try {
    return decodeBody(response);
  } catch {
    return text(response);
  }
}

/** A URL-encoded body as courier's Rust side reads it back (`encode::search::parse`), leniently. */
export function parseForm(body: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const { path, append } = keyPath(key);
    let node = root;
    for (const field of path.slice(0, -1)) {
      const next = own(node, field);
      if (typeof next === "object" && next !== null && !Array.isArray(next)) {
        node = next as Record<string, unknown>;
      } else {
        const fresh: Record<string, unknown> = {};
        put(node, field, fresh);
        node = fresh;
      }
    }
    const last = path[path.length - 1]!;
    const existing = own(node, last);
    if (Array.isArray(existing)) existing.push(value);
    else if (typeof existing === "string") put(node, last, [existing, value]);
    else put(node, last, append ? [value] : value);
  }
  return root;
}

/** `a[b][c]` as `["a", "b", "c"]`, a final `[]` as `append`; a malformed key is taken as it is. */
function keyPath(key: string): { path: string[]; append: boolean } {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match) return { path: [key], append: false };
  const fields = [...match[2]!.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]!);
  const append = fields.length > 0 && fields[fields.length - 1] === "";
  if (append) fields.pop();
  if (fields.includes("")) return { path: [key], append: false };
  return { path: [match[1]!, ...fields], append };
}

function own(node: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(node, key) ? node[key] : undefined;
}

/** Sets an own property, even one named `__proto__`. */
function put(node: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true });
}

function text(response: RawResponse): string {
  const charset = /;\s*charset\s*=\s*"?([^";]+)"?/i.exec(response.headers.get("content-type") ?? "")?.[1];
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset ?? "utf-8");
  } catch {
    decoder = new TextDecoder("utf-8");
  }
  return decoder.decode(response.body);
}

/** The UTF-8 length of `text`, without encoding it. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

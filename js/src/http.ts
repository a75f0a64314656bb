/**
 * HTTP calls through the proxy route: GET or POST, the request, and the life of a call in
 * flight — coalescing, cancel-previous, timeouts, the caller's signal and hooks.
 *
 * A call joins a *flight* (one request to the proxy). Identical reads in flight share one
 * flight; each call is a separate *waiter* on it, which a timeout, a signal or a newer call
 * can take off without touching the others. A flight nobody waits on any more is aborted.
 *
 * @module
 */

import type { Call, CallerState, Pending, Settings } from "./context.js";
import { addAddress, mergeHeaders, resolveUrl, runHook } from "./context.js";
import { addCsrfToken } from "./csrf.js";
import { ConfigurationError, HTTPError, failure } from "./errors.js";
import type { UploadProgress } from "./options.js";
import type { ProxyRequest, RawResponse } from "./wire.js";
import {
  MAX_GET_ADDRESS,
  checkVariables,
  decodeBody,
  decodeErrorBody,
  isFormData,
  textsFirst,
  variablesJson,
} from "./wire.js";
import { sendWithProgress } from "./xhr.js";

/** What one call needs beyond its request. */
interface Plan {
  readonly request: ProxyRequest;
  /** The identity identical reads share a flight by; `undefined` when the call is not shared. */
  readonly key: string | undefined;
  /** Whether a newer call of the endpoint cancels this one. */
  readonly cancels: boolean;
  /** The local wait, in milliseconds. */
  readonly timeout: number | undefined;
  readonly onUploadProgress: ((progress: UploadProgress) => void) | undefined;
}

/**
 * Calls an HTTP endpoint. Everything refused before sending (a `ConfigurationError`) comes
 * back as a rejected promise.
 */
export function callHttp(state: CallerState, call: Call): Promise<unknown> {
  let plan: Plan;
  try {
    plan = planCall(state.settings, call);
  } catch (error) {
    return Promise.reject(error);
  }
  return wait(state, call, plan);
}

/** Checks the call and writes its request: the GET/POST choice, address, body and headers. */
function planCall(settings: Settings, call: Call): Plan {
  const { path, options, variables, route } = call;
  const forced = verb(options.method, path);
  const timeout = checkTimeout(options.timeout, path, "the call's");
  const notSerializable = checkVariables(path, variables);
  if (notSerializable) throw notSerializable;
  const form = isFormData(variables);
  const upload = options.onUploadProgress;
  if (forced === "GET" && (form || upload)) {
    throw new ConfigurationError(
      "INVALID_OPTION",
      `\`${path}\`: a call ${form ? "whose variables are a FormData" : "watching its upload"} goes as POST, not GET`,
      path,
    );
  }
  const json = form ? undefined : variablesJson(path, variables);
  const url = resolveUrl(settings, settings.paths.http, path);
  addAddress(url, settings, call);
  if (timeout !== undefined) url.searchParams.append("_t", String(Math.ceil(timeout)));

  const read = route !== undefined && "type" in route && route.type === "query";
  const mayGet = read && "get" in route && route.get === true && !settings.sensitive.has(path);
  let method: "GET" | "POST" = forced ?? (mayGet && !form && !upload ? "GET" : "POST");
  let address = url.href;
  if (method === "GET") {
    const get = new URL(url);
    if (json !== undefined) get.searchParams.append("_v", json);
    // A forced GET is sent as asked, however long.
    if (forced === undefined && get.href.length > MAX_GET_ADDRESS) method = "POST";
    else address = get.href;
  }

  const headers = mergeHeaders(settings, options);
  let body: string | FormData | undefined;
  if (method === "POST") {
    if (form) {
      // The browser writes the multipart boundary into the content type.
      headers.delete("content-type");
      body = textsFirst(variables);
    } else {
      headers.set("content-type", "application/json");
      body = `{"variables":${json ?? "null"}}`;
    }
    addCsrfToken(headers, settings.csrf);
    // A write whose route asks for one carries a key made for this call, which the proxy
    // passes on, so that its retries upstream are applied once (docs/PROTOCOL.md).
    const keyed = route !== undefined && "type" in route && route.type === "mutation" && route.idempotencyKey === true;
    if (keyed && !headers.has("idempotency-key")) headers.set("idempotency-key", idempotencyKey());
  }
  const credentials = options.credentials ?? settings.credentials;
  const request: ProxyRequest = { method, url: address, headers, body, credentials };

  // The name-only form knows no reads: only the paths the caller lists cancel.
  const named = settings.routes === undefined;
  const cancels = (read && settings.deduplicate) || ((read || named) && settings.cancelPrevious.has(path));
  const shared = read && !form && !upload && (options.coalesce ?? settings.coalesce);
  const key = shared
    ? JSON.stringify([method, address, [...headers], credentials, typeof body === "string" ? body : null])
    : undefined;
  return {
    request,
    key,
    cancels,
    timeout: timeout ?? settings.timeout,
    onUploadProgress: upload,
  };
}

/** A fresh idempotency key: 32 hex digits from `crypto.getRandomValues` (which, unlike `randomUUID`, a page served over plain HTTP has too). */
function idempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function verb(method: unknown, path: string): "GET" | "POST" | undefined {
  if (method === undefined) return undefined;
  const upper = typeof method === "string" ? method.toUpperCase() : method;
  if (upper === "GET" || upper === "POST") return upper;
  throw new ConfigurationError(
    "INVALID_OPTION",
    `\`${path}\`: a proxy call goes as GET or POST, not ${String(method)}`,
    path,
  );
}

/** A timeout in milliseconds: a positive finite number, or `undefined`. */
export function checkTimeout(timeout: unknown, path: string | undefined, whose: string): number | undefined {
  if (timeout === undefined) return undefined;
  if (typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0) return timeout;
  throw new ConfigurationError(
    "INVALID_OPTION",
    `${path === undefined ? "" : `\`${path}\`: `}${whose} timeout must be a positive number of milliseconds, not ${String(timeout)}`,
    path,
  );
}

/** How a flight ended: a response, or no response (the network, or an abort). */
type Outcome = { readonly response: RawResponse } | { readonly failed: unknown };

/** One request to the proxy and the calls waiting for it. */
class Flight {
  readonly controller = new AbortController();
  readonly waiters = new Set<object>();
  readonly outcome: Promise<Outcome>;
  done = false;

  constructor(send: (signal: AbortSignal) => Promise<RawResponse>, private readonly forget: () => void) {
    this.outcome = send(this.controller.signal).then(
      (response) => ({ response }),
      (failed: unknown) => ({ failed }),
    );
    void this.outcome.then(() => {
      this.done = true;
      this.forget();
    });
  }

  /** Takes `waiter` off; the request is aborted when nobody waits any more. */
  leave(waiter: object): void {
    this.waiters.delete(waiter);
    if (this.waiters.size === 0 && !this.done) {
      this.forget();
      this.controller.abort();
    }
  }
}

function wait(state: CallerState, call: Call, plan: Plan): Promise<unknown> {
  const { settings } = state;
  const { path, options } = call;
  const signal = options.signal;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const me: Pending = { cancel: () => fail(failure(499, "CANCELLED", `\`${path}\` was cancelled by a newer call`, path)) };

    const finish = (): void => {
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (state.latest.get(path) === me) state.latest.delete(path);
    };
    function fail(error: unknown): void {
      if (settled) return;
      finish();
      flight.leave(me);
      if (error instanceof HTTPError) runHook(settings.onError, error, "onError");
      reject(error);
    }
    const succeed = (response: RawResponse): void => {
      if (settled) return;
      finish();
      if (response.status >= 400) {
        const data = decodeErrorBody(response);
        refuse(new HTTPError(response.status, new Headers(response.headers), data, path));
        return;
      }
      let data: unknown;
      try {
        data = decodeBody(response);
      } catch (error) {
        reject(
          new SyntaxError(`\`${path}\`: the response (status ${response.status}) is not the JSON it says it is`, {
            cause: error,
          }),
        );
        return;
      }
      runHook(settings.onSuccess, data, "onSuccess");
      resolve(call.raw ? { status: response.status, headers: new Headers(response.headers), data } : data);
    };
    // An answered call's error: its flight is over.
    const refuse = (error: HTTPError): void => {
      runHook(settings.onError, error, "onError");
      reject(error);
    };
    const onAbort = (): void => fail(signal?.reason);

    const flight = join(state, plan, path);
    flight.waiters.add(me);
    if (plan.cancels) {
      // After joining: a previous call sharing this flight is cancelled, the flight is not.
      const previous = state.latest.get(path);
      state.latest.set(path, me);
      previous?.cancel();
    }
    if (plan.timeout !== undefined) {
      const ms = plan.timeout;
      timer = setTimeout(
        () => fail(failure(0, "TIMEOUT", `\`${path}\` got no answer from the proxy within ${ms} ms`, path)),
        ms,
      );
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    void flight.outcome.then((outcome) => {
      if ("response" in outcome) succeed(outcome.response);
      else fail(failure(0, "NETWORK", networkMessage(outcome.failed), path, outcome.failed));
    });
  });
}

function networkMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message || "the request to the proxy failed";
}

/** The flight this call waits on: an identical read's in flight, or a new one. */
function join(state: CallerState, plan: Plan, path: string): Flight {
  const { key } = plan;
  if (key !== undefined) {
    const existing = state.flights.get(key);
    if (existing instanceof Flight) return existing;
  }
  const forget = (): void => {
    if (key !== undefined && state.flights.get(key) === flight) state.flights.delete(key);
  };
  const upload = plan.onUploadProgress;
  const flight: Flight = new Flight(
    (signal) =>
      upload === undefined ? viaFetch(plan.request, signal) : sendWithProgress(plan.request, signal, upload, path),
    forget,
  );
  if (key !== undefined) state.flights.set(key, flight);
  return flight;
}

async function viaFetch(request: ProxyRequest, signal: AbortSignal): Promise<RawResponse> {
  const response = await globalThis.fetch(request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body ?? null,
    credentials: request.credentials,
    signal,
  });
  const body = await response.arrayBuffer();
  return { status: response.status, headers: response.headers, body };
}

// Type tests: compiled by `npm run typecheck` (tsc --noEmit). Every `@ts-expect-error` line must
// be an error, or tsc fails; every other line must compile. Nothing here runs.

import {
  ChannelError,
  createProxyCaller,
  type Channel,
  type ChannelErrorKind,
  type DuplexChannel,
  type EventStream,
  type HttpResponse,
  type InferClient,
  type PushChannel,
  type RoutesRecord,
  type StreamEvent,
} from "../../src/index.js";
import { routes, type Endpoints, type Routes, type User } from "./routes.js";
import { routes as weather } from "./config-only.js";

/** `true` when `A` and `B` are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assert<T extends true>(): T | void {}

declare const file: Blob;

export async function routesForm(): Promise<void> {
  const caller = createProxyCaller(routes);

  // Calls resolve to the response type.
  const user = await caller.users.get(7);
  assert<Equal<typeof user, User>>();
  const found = await caller.users.search({ q: "ada" });
  assert<Equal<typeof found, User[]>>();
  assert<Equal<ReturnType<typeof caller.users.create>, Promise<User>>>();

  // Endpoints without variables take no argument (an explicit null or undefined is fine).
  const everyone = await caller.users.list();
  assert<Equal<typeof everyone, User[]>>();
  await caller.users.list(null);
  await caller.users.list(undefined);
  await caller.admin.reports.rebuild();

  // @ts-expect-error an endpoint not in the routes
  caller.users.remove(7);
  // @ts-expect-error a group not in the routes
  caller.nope.x();
  // @ts-expect-error wrong variables
  caller.users.get("x");
  // @ts-expect-error wrong variables: a missing field
  caller.users.search({});
  // @ts-expect-error missing required variables
  caller.users.get();
  // @ts-expect-error a wrong use of the response
  (await caller.users.get(7)).missing;
  // @ts-expect-error the response is not a string
  const name: string = await caller.users.get(7);
  void name;
  // @ts-expect-error variables on an endpoint that takes none
  caller.users.list({ all: true });

  // Nested groups, several levels deep.
  const daily = await caller.admin.reports.daily.get({ day: "2024-01-01" });
  assert<Equal<typeof daily, { total: number }>>();
  // @ts-expect-error wrong variables, deep
  caller.admin.reports.daily.get({ day: 1 });

  // A member that is both an endpoint and a group.
  const room = caller.chat.room("lobby");
  const members = await caller.chat.room.members("lobby");
  assert<Equal<typeof members, string[]>>();

  // raw: the whole response, on the client and on any group, chainable with `with`.
  const whole = await caller.users.raw.get(7);
  assert<Equal<typeof whole, HttpResponse<User>>>();
  const status: number = whole.status;
  const headers: Headers = whole.headers;
  void status;
  void headers;
  const viaRoot = await caller.raw.users.with({ timeout: 1000 }).get(7);
  assert<Equal<typeof viaRoot, HttpResponse<User>>>();
  const withThenRaw = await caller.users.with({ headers: { "x-a": "1" } }).raw.get(7);
  assert<Equal<typeof withThenRaw, HttpResponse<User>>>();
  const deepRaw = await caller.raw.admin.reports.daily.get({ day: "d" });
  assert<Equal<typeof deepRaw, HttpResponse<{ total: number }>>>();
  const withData = await caller.with({ method: "POST" }).users.get(7);
  assert<Equal<typeof withData, User>>();
  // @ts-expect-error a method other than GET and POST
  caller.with({ method: "PUT" });
  // @ts-expect-error an option that does not exist
  caller.users.with({ retries: 3 });
  caller.users.with({
    timeout: 5,
    signal: new AbortController().signal,
    coalesce: false,
    credentials: "omit",
    onUploadProgress: ({ percent }) => void percent,
  });

  // Streams: an async iterable of events.
  const events = caller.users.events();
  assert<Equal<typeof events, EventStream<{ online: boolean }>>>();
  for await (const event of events) {
    assert<Equal<typeof event, StreamEvent<{ online: boolean }>>>();
    const online: boolean = event.data.online;
    const id: string | undefined = event.id;
    void online;
    void id;
  }
  events.close();
  // @ts-expect-error a stream is not a promise
  await caller.users.events().then;

  // Channels: two-way with `send`, push-only without.
  assert<Equal<typeof room, DuplexChannel<{ from: string; text: string }, { text: string }>>>();
  room.send({ text: "hi" });
  // @ts-expect-error the wrong message type
  room.send({ body: "hi" });
  for await (const message of room) {
    const text: string = message.text;
    void text;
  }
  const ticks = caller.market.ticks("EURUSD");
  assert<Equal<typeof ticks, PushChannel<{ price: number }>>>();
  // @ts-expect-error send on a push-only channel
  ticks.send({ price: 1 });
  const state: "connecting" | "open" | "reconnecting" | "closed" = ticks.state;
  void state;
  ticks.onState((s) => void s);
  const position: string | null = ticks.position;
  void position;
  // @ts-expect-error the position is the server's to give, not the page's to set
  ticks.position = "e:1";
  await ticks.opened;
  ticks.close();
  // @ts-expect-error the variables of a channel
  caller.market.ticks(7);

  // Reserved names are not endpoints: `raw` and `with` are the view methods.
  assert<Equal<typeof caller.users.raw.raw, typeof caller.users.raw>>();

  void file;
}

export async function configOnly(): Promise<void> {
  const caller = createProxyCaller(weather, { proxyPath: { ws: "/api/ws" } });
  const today = await caller.forecast.today({ city: "Oslo" });
  assert<Equal<typeof today, unknown>>();
  await caller.forecast.today();
  const alerts = caller.forecast.alerts();
  assert<Equal<typeof alerts, EventStream<unknown>>>();
  const feed = caller.stations.feed("all");
  feed.send({ anything: true });
  assert<Equal<typeof feed, Channel<unknown, unknown>>>();
  // @ts-expect-error still only the routed groups
  caller.users.get(1);
}

export async function handWritten(): Promise<void> {
  // A record written by hand, with no types at all.
  const caller = createProxyCaller({
    source: "demo",
    endpoints: {
      "users.get": { type: "query", get: true },
      "users.events": { transport: "sse" },
      "chat.room": { transport: "ws", bidirectional: true },
      "chat.ticker": { transport: "ws" },
    },
  });
  const user = await caller.users.get(7);
  assert<Equal<typeof user, unknown>>();
  const events = caller.users.events();
  assert<Equal<typeof events, EventStream<unknown>>>();
  caller.chat.room("x").send("anything");
  // @ts-expect-error a push-only channel has no send
  caller.chat.ticker().send(1);
  // @ts-expect-error not routed
  caller.users.create({});

  // A record declared apart, with `satisfies`.
  const record = {
    source: "demo",
    endpoints: { "a.b.c": { type: "mutation" }, "a.b": { type: "query" } },
  } satisfies RoutesRecord;
  const nested = createProxyCaller(record);
  await nested.a.b();
  await nested.a.b.c({ any: 1 });

  // A record typed as the plain interface: nothing is known, anything compiles (its members
  // come from an index signature: `!` for this tsconfig's `noUncheckedIndexedAccess`).
  const loose: RoutesRecord = record;
  const untyped = createProxyCaller(loose);
  const anything = await untyped.x!.y!.z!(1);
  assert<Equal<typeof anything, unknown>>();
  const raw = await untyped.raw.x!.y!(1);
  assert<Equal<typeof raw, HttpResponse<unknown>>>();
}

export async function nameOnly(): Promise<void> {
  // Typed by the routes' type: HTTP endpoints only, streams and channels typed out.
  const caller = createProxyCaller<Routes>("demo");
  const user = await caller.users.get(7);
  assert<Equal<typeof user, User>>();
  await caller.users.create({ name: "Ada" });
  // @ts-expect-error a stream from the name-only form
  caller.users.events();
  // @ts-expect-error a channel from the name-only form
  caller.chat.room("lobby");
  // The group both callable and a group keeps its HTTP member.
  await caller.chat.room.members("lobby");
  // @ts-expect-error not in the routes
  caller.users.remove(1);

  // Typed by an `Endpoints` interface: channels (with `send`) are left out, calls are promises.
  const byInterface = createProxyCaller<Endpoints>("demo");
  const found = await byInterface.users.search({ q: "a" });
  assert<Equal<typeof found, User[]>>();
  // @ts-expect-error a channel from the name-only form
  byInterface.chat.room("lobby");
  // @ts-expect-error a stream from the name-only form cannot be iterated: it is a call
  for await (const event of byInterface.users.events()) void event;

  // No type: any path, everything unknown.
  const untyped = createProxyCaller("demo", { baseUrl: "https://app.example" });
  const anything = await untyped.users!.get!(7);
  assert<Equal<typeof anything, unknown>>();
  await untyped.a!.b!.c!.d!();
  const raw = await untyped.with({ timeout: 1 }).raw.users!.get!(1);
  assert<Equal<typeof raw, HttpResponse<unknown>>>();

  // The boundary form: typed from the boundary record.
  const bounded = createProxyCaller("demo", { boundary: routes, proxyPath: { ws: "/api/ws" } });
  const viaBoundary = await bounded.users.get(7);
  assert<Equal<typeof viaBoundary, User>>();
  const boundaryEvents = bounded.users.events();
  assert<Equal<typeof boundaryEvents, EventStream<{ online: boolean }>>>();
  // @ts-expect-error wrong variables through the boundary
  bounded.users.get("x");
  // The boundary's type given explicitly; options without a boundary stay name-only.
  const explicit = createProxyCaller<Routes>("demo", { boundary: routes });
  assert<Equal<typeof explicit.users.events, typeof bounded.users.events>>();
  const withOptions = createProxyCaller<Routes>("demo", { baseUrl: "https://app.example", timeout: 5 });
  // @ts-expect-error still name-only: no streams
  withOptions.users.events();
  await withOptions.users.get(7);
}

export function csrfAndDeduplicate(): void {
  const csrf = { cookie: "csrf_token", header: "x-csrf-token" };
  // Every form takes `csrf`.
  createProxyCaller(routes, { csrf });
  createProxyCaller("demo", { boundary: routes, csrf });
  createProxyCaller<Routes>("demo", { csrf });
  createProxyCaller("demo", { csrf: undefined });
  // @ts-expect-error `csrf` needs both names
  createProxyCaller<Routes>("demo", { csrf: { cookie: "csrf_token" } });
  // @ts-expect-error `csrf` is names, not a token
  createProxyCaller(routes, { csrf: "x-csrf-token" });

  // `deduplicate: true` only where the caller knows reads from writes.
  createProxyCaller(routes, { deduplicate: true });
  createProxyCaller("demo", { boundary: routes, deduplicate: true });
  createProxyCaller<Routes>("demo", { deduplicate: false });
  createProxyCaller("demo", { deduplicate: undefined });
  // @ts-expect-error the name-only form refuses `deduplicate: true`
  createProxyCaller<Routes>("demo", { deduplicate: true });
  // @ts-expect-error without a type argument too
  createProxyCaller("demo", { baseUrl: "https://app.example", deduplicate: true });
}

export function channelRefusals(error: unknown): void {
  assert<Equal<Extract<ChannelErrorKind, "refused">, "refused">>();
  if (error instanceof ChannelError && error.kind === "refused") {
    assert<Equal<typeof error.code, number | undefined>>();
    assert<Equal<typeof error.status, number | undefined>>();
    assert<Equal<typeof error.refusal, string | undefined>>();
    assert<Equal<typeof error.reason, string | undefined>>();
  }
}

// InferClient names the client's type.
export const typed: InferClient<typeof routes> = createProxyCaller(routes);
export const typedByInterface: InferClient<Endpoints> = createProxyCaller<Endpoints>("demo");

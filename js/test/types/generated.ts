// Type tests against the routes module the Rust API writes (`js/test/routes.gen.ts`, from the
// browser fixture's typed API with `#[derive(courier::TypeScript)]`; CI checks it is current):
// a page's calls are checked against the Rust types. Compiled by `npm run typecheck`.

import { createProxyCaller, type HttpResponse } from "../../src/index.js";
import { routes, type Attached, type ChatOut, type ListTodos, type Me, type Sent, type Todo } from "../routes.gen.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assert<T extends true>(): T | void {}

export async function fromRust(): Promise<void> {
  const caller = createProxyCaller(routes, { proxyPath: { ws: "/api/ws" } });

  // Rust's `Http<Todo, TodoId>`: `{ id: number }` in, `Todo` out.
  const todo = await caller.todos.get({ id: 1 });
  assert<Equal<typeof todo, Todo>>();
  const title: string = todo.title;
  // @ts-expect-error `Todo` has no `owner`
  todo.owner;
  // @ts-expect-error `id` is a number (Rust's u32)
  await caller.todos.get({ id: "1" });
  // @ts-expect-error the variables are required
  await caller.todos.get();
  // @ts-expect-error `TodoId` has no `title`
  await caller.todos.get({ id: 1, title });

  // `Http<Vec<Todo>, ListTodos>`, `ListTodos { done: Option<bool> }`: what a page sends may
  // leave an `Option` out (`done?: boolean | null`), as the query leaves a `null` out.
  const all = await caller.todos.list({});
  assert<Equal<typeof all, Todo[]>>();
  const raw = await caller.raw.todos.list({ done: true });
  assert<Equal<typeof raw, HttpResponse<Todo[]>>>();
  await caller.todos.list({ done: null });
  // @ts-expect-error `done` is a boolean
  await caller.todos.list({ done: "yes" });
  // @ts-expect-error `ListTodos` has no `title`
  await caller.todos.list({ title });

  // `Http<ListTodos, ListTodos>`: one type both ways. Sent, `done` may be left out; read back,
  // it is there and may be null, as serde writes `None`.
  const filter = await caller.debug.filter({});
  assert<Equal<typeof filter, ListTodos>>();
  const done: boolean | null = filter.done;
  // @ts-expect-error `done` may be null
  const sure: boolean = filter.done;
  // What was read goes back as it is.
  await caller.debug.filter(filter);
  const left: Sent.ListTodos = {};
  // @ts-expect-error a response's `done` is not optional
  const read: ListTodos = {};
  void [done, sure, left, read];

  // `Option<String>` is `string | null`.
  const me = await caller.account.me();
  assert<Equal<typeof me, Me>>();
  // @ts-expect-error `user` may be null
  me.user.length;

  // A form is a `FormData`.
  const attached = await caller.todos.attach(new FormData());
  assert<Equal<typeof attached, Attached>>();
  // @ts-expect-error a form's variables are a FormData
  await caller.todos.attach({ file: "x" });

  // `Stream<Tick, Ticks>`.
  for await (const event of caller.live.ticks({ until: 3, per_connection: 1 })) {
    const n: number = event.data.n;
    void n;
  }
  // @ts-expect-error `Ticks` needs `per_connection`
  caller.live.ticks({ until: 3 });

  // `Channel<ChatOut, String, ChatIn>`: two-way; `Channel<ChatOut, String>`: push-only.
  const room = caller.live.room("lobby");
  room.send({ text: "hi" });
  // @ts-expect-error `ChatIn` is `{ text }`
  room.send({ body: "hi" });
  for await (const message of room) {
    assert<Equal<typeof message, ChatOut>>();
  }
  const news = caller.live.news("daily");
  // @ts-expect-error a push-only channel takes no messages
  news.send({ text: "no" });

  // Not exposed in Rust, so not in the routes, so not in the client.
  // @ts-expect-error `admin` is not routed
  caller.admin.purge();
}

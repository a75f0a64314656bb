// Written by courier's routes writer (`courier routes`, or `courier::routes::Command`
// in the app). Do not edit: regenerate it.

export type RouteShape =
  | { type: "query"; get?: true }
  | { type: "mutation" }
  | { transport: "sse" }
  | { transport: "ws"; bidirectional?: true };

export type Attached = { parts: Array<Part>, };
export type ChatIn = { text: string, };
export type ChatOut = { from: string, text: string, };
export type Credentials = { user: string, };
export type Echo = { method: string, query: string, headers: { [key in string]: string }, };
export type ListTodos = { done: boolean | null, };
export type Me = { user: string | null, };
export type NewTodo = { title: string, };
export type Part = { name: string, file_name: string | null, size: number, };
export type Search = { q: string, delay_ms: number, };
export type Secret = { password: string, };
export type Tick = { n: number, };
export type Ticks = { until: number, per_connection: number, };
export type Todo = { id: number, title: string, done: boolean, };
export type TodoId = { id: number, };
export type Wait = { ms: number, pad?: string, };

// What a page sends, where it differs from what serde writes: an `Option` field may
// be left out (courier leaves a `null` out of a query; serde reads a missing one as `None`).
export namespace Sent {
  export type ListTodos = { done?: boolean | null, };
}

const record = {
  "source": "demo",
  "endpoints": {
    "account.check": {
      "type": "query"
    },
    "account.login": {
      "type": "mutation"
    },
    "account.me": {
      "type": "query"
    },
    "debug.echo": {
      "type": "query",
      "get": true
    },
    "debug.filter": {
      "type": "query"
    },
    "debug.teapot": {
      "type": "query"
    },
    "debug.text": {
      "type": "query"
    },
    "debug.wait": {
      "type": "query",
      "get": true
    },
    "live.news": {
      "transport": "ws"
    },
    "live.room": {
      "transport": "ws",
      "bidirectional": true
    },
    "live.ticks": {
      "transport": "sse"
    },
    "todos.attach": {
      "type": "mutation"
    },
    "todos.create": {
      "type": "mutation"
    },
    "todos.get": {
      "type": "query",
      "get": true
    },
    "todos.list": {
      "type": "query",
      "get": true
    },
    "todos.search": {
      "type": "query"
    }
  },
  "cancelPrevious": [
    "todos.search"
  ],
  "coalesce": true,
  "csrf": {
    "cookie": "csrf_token",
    "header": "x-csrf-token"
  }
} as const;

export interface Endpoints {
  "account.check": { variables: Secret; response: Me };
  "account.login": { variables: Credentials; response: Me };
  "account.me": { variables: null; response: Me };
  "debug.echo": { variables: null; response: Echo };
  "debug.filter": { variables: Sent.ListTodos; response: ListTodos };
  "debug.teapot": { variables: null; response: Echo };
  "debug.text": { variables: null; response: string };
  "debug.wait": { variables: Wait; response: Wait };
  "live.news": { variables: string; response: ChatOut };
  "live.room": { variables: string; response: ChatOut; send: ChatIn };
  "live.ticks": { variables: Ticks; response: Tick };
  "todos.attach": { variables: FormData; response: Attached };
  "todos.create": { variables: NewTodo; response: Todo };
  "todos.get": { variables: TodoId; response: Todo };
  "todos.list": { variables: Sent.ListTodos; response: Array<Todo> };
  "todos.search": { variables: Search; response: Array<Todo> };
}

export const routes: typeof record & { readonly types?: Endpoints } = record;
export type Routes = typeof routes;
export type EndpointPath = keyof Routes["endpoints"];

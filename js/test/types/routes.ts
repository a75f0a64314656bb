// Written by courier's routes writer (`courier routes`, or `courier::routes::Command`
// in the app). Do not edit: regenerate it.
// (A sample of the generated shape, for the type tests.)

export type RouteShape =
  | { type: "query"; get?: true }
  | { type: "mutation" }
  | { transport: "sse" }
  | { transport: "ws"; bidirectional?: true };

export type User = { id: number; name: string };
export type UserId = number;

const record = {
  "source": "demo",
  "endpoints": {
    "admin.reports.daily.get": {
      "type": "query",
      "get": true
    },
    "admin.reports.rebuild": {
      "type": "mutation"
    },
    "chat.room": {
      "transport": "ws",
      "bidirectional": true
    },
    "chat.room.members": {
      "type": "query"
    },
    "market.ticks": {
      "transport": "ws"
    },
    "users.create": {
      "type": "mutation"
    },
    "users.events": {
      "transport": "sse"
    },
    "users.get": {
      "type": "query",
      "get": true
    },
    "users.list": {
      "type": "query",
      "get": true
    },
    "users.search": {
      "type": "query"
    }
  },
  "cancelPrevious": [
    "users.search"
  ],
  "coalesce": true,
  "csrf": {
    "cookie": "csrf_token",
    "header": "x-csrf-token"
  }
} as const;

export interface Endpoints {
  "admin.reports.daily.get": { variables: { day: string }; response: { total: number } };
  "admin.reports.rebuild": { variables: null; response: null };
  "chat.room": { variables: string; response: { from: string; text: string }; send: { text: string } };
  "chat.room.members": { variables: string; response: string[] };
  "market.ticks": { variables: string; response: { price: number } };
  "users.create": { variables: { name: string }; response: User };
  "users.events": { variables: null; response: { online: boolean } };
  "users.get": { variables: UserId; response: User };
  "users.list": { variables: null; response: User[] };
  "users.search": { variables: { q: string }; response: User[] };
}

export const routes: typeof record & { readonly types?: Endpoints } = record;
export type Routes = typeof routes;
export type EndpointPath = keyof Routes["endpoints"];

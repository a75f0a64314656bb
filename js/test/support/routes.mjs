// The sample routes record of the unit tests: the shape `courier routes --ts` writes.

export const routes = {
  source: "demo",
  endpoints: {
    "admin.reports.daily.get": { type: "query", get: true },
    "chat.room": { transport: "ws", bidirectional: true },
    "chat.room.members": { type: "query" },
    "market.ticks": { transport: "ws" },
    "users.avatar": { type: "mutation" },
    "users.create": { type: "mutation" },
    "users.events": { transport: "sse" },
    "users.get": { type: "query", get: true },
    "users.list": { type: "query", get: true },
    "users.login": { type: "query", get: true },
    "users.search": { type: "query" },
  },
  cancelPrevious: ["users.search"],
  coalesce: true,
  sensitive: ["users.login"],
  csrf: { cookie: "csrf_token", header: "x-csrf-token" },
};

export const BASE = "https://app.example";

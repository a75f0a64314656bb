// Written by courier's routes writer (`courier routes`, or `courier::routes::Command`
// in the app). Do not edit: regenerate it.
// (A sample of a config-only source: no Rust types, everything `unknown`.)

export type RouteShape =
  | { type: "query"; get?: true }
  | { type: "mutation" }
  | { transport: "sse" }
  | { transport: "ws"; bidirectional?: true };

const record = {
  "source": "weather",
  "endpoints": {
    "forecast.today": {
      "type": "query",
      "get": true
    },
    "forecast.alerts": {
      "transport": "sse"
    },
    "stations.feed": {
      "transport": "ws",
      "bidirectional": true
    }
  },
  "coalesce": true
} as const;

export interface Endpoints {
  "forecast.alerts": { variables: unknown; response: unknown };
  "forecast.today": { variables: unknown; response: unknown };
  "stations.feed": { variables: unknown; response: unknown; send: unknown };
}

export const routes: typeof record & { readonly types?: Endpoints } = record;
export type Routes = typeof routes;
export type EndpointPath = keyof Routes["endpoints"];

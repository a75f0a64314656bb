// The backend-for-frontend a team writes by hand in Node, for `benches/proxy_hop.sh` to load
// beside courier's proxy: Node's `http` server, a route at `/api/request` that reads `_s`,
// `_g`, `_m` and `_v`, parses `_v` as JSON, and calls the upstream with `fetch`
// (`GET /users/{id}`, undici's keep-alive pool), answering with the upstream's status, content
// type and body. Nothing else is checked or relayed.
//
//   node benches/peer_hop.mjs 127.0.0.1:8084 http://127.0.0.1:8080
import http from "node:http";

const [listen, upstream] = process.argv.slice(2);
if (!listen || !upstream) {
  console.error("usage: node benches/peer_hop.mjs LISTEN UPSTREAM_URL");
  process.exit(2);
}
const [host, port] = listen.split(":");
const base = upstream.replace(/\/$/, "");

http
  .createServer(async (request, response) => {
    const url = new URL(request.url, "http://localhost");
    const query = url.searchParams;
    if (
      url.pathname !== "/api/request" ||
      query.get("_s") !== "demo" ||
      query.get("_g") !== "users" ||
      query.get("_m") !== "get"
    ) {
      response.writeHead(404).end();
      return;
    }
    let variables;
    try {
      variables = JSON.parse(query.get("_v") ?? "");
    } catch {
      response.writeHead(400).end("`_v` is not JSON");
      return;
    }
    const id = variables !== null && typeof variables === "object" ? variables.id : variables;
    if (typeof id !== "number" && typeof id !== "string") {
      response.writeHead(400).end("no id");
      return;
    }
    try {
      const answer = await fetch(`${base}/users/${encodeURIComponent(id)}`);
      const body = Buffer.from(await answer.arrayBuffer());
      response
        .writeHead(answer.status, {
          "content-type": answer.headers.get("content-type") ?? "application/json",
        })
        .end(body);
    } catch {
      response.writeHead(502).end();
    }
  })
  .listen(Number(port), host);

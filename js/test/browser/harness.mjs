// The browser tests' harness: starts the fixture (a recording upstream, courier's proxy serving
// the test pages and the package, and a page on a second origin; js/fixture) and Debian's
// Chromium through playwright-core, gives each test a fresh page, and stands a relay between a
// page and the proxy for a test to cut the page's network.
//
// Environment: COURIER_FIXTURE (the fixture binary; default ../target/debug/courier-browser-fixture
// from js/), CHROMIUM (default /usr/bin/chromium).

import { spawn } from "node:child_process";
import net from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const js = fileURLToPath(new URL("../..", import.meta.url));
const fixturePath =
  process.env.COURIER_FIXTURE ?? `${js}/../target/debug/courier-browser-fixture`;

/** Flags Chromium needs on a closed, headless machine (no sandbox as root, no phoning home). */
export const CHROMIUM_ARGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

/**
 * Starts the fixture and Chromium. Returns `{ app, elsewhere, upstream, routes, boundary, chat,
 * page, recorded, reset, close }`.
 */
export async function start() {
  const child = spawn(fixturePath, [], { stdio: ["pipe", "pipe", "inherit"] });
  const failed = new Promise((_, reject) => {
    child.once("error", (e) => reject(new Error(`cannot start the fixture ${fixturePath}: ${e.message}`)));
    child.once("exit", (code) => reject(new Error(`the fixture exited with ${code} before it served`)));
  });
  const lines = createInterface({ input: child.stdout });
  const first = new Promise((resolve) => lines.once("line", resolve));
  const line = await Promise.race([first, failed]);
  const fixture = JSON.parse(line);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: CHROMIUM_ARGS,
  });

  return {
    ...fixture,
    browser,
    /** A fresh context (its own cookies) and page at `origin` (default the app's). */
    async page(origin = fixture.app, path = "/") {
      const context = await browser.newContext();
      const page = await context.newPage();
      page.on("pageerror", (e) => console.error("page error:", e));
      if (process.env.COURIER_DEBUG) {
        page.on("console", (m) => console.error("console:", m.text()));
        page.on("websocket", (ws) => {
          console.error("socket", ws.url());
          ws.on("framesent", (e) => console.error("  sent", e.payload));
          ws.on("framereceived", (e) => console.error("  received", e.payload));
          ws.on("close", () => console.error("  closed"));
        });
      }
      await page.goto(origin + path);
      return page;
    },
    /** What reached the upstream since the last reset. */
    async recorded() {
      return (await fetch(`${fixture.upstream}/__recorded`)).json();
    },
    async reset() {
      await fetch(`${fixture.upstream}/__reset`, { method: "POST" });
    },
    async close() {
      await browser.close();
      child.stdin.end();
      child.kill();
    },
  };
}

/**
 * Runs `body` in `page` with the package imported as `courier` and the fixture's `routes`:
 * `body` is a function `async ({ courier, routes, arg }) => …`, and what it returns (JSON) comes
 * back.
 */
export async function run(page, routes, body, arg = null) {
  return page.evaluate(
    async ({ source, routes, arg }) => {
      const courier = await import("/pkg/index.js");
      const fn = new Function(`return (${source})`)();
      return fn({ courier, routes, arg });
    },
    { source: body.toString(), routes, arg },
  );
}

/**
 * The network between a page and `target` (an `http://host:port` origin): a TCP relay on a port
 * of its own, `origin` its address. `cut()` drops every connection through it — a page's socket
 * closes with 1006, as when a network goes away (Chromium's offline emulation leaves open
 * sockets be) — and refuses new ones until `restore()`.
 */
export async function relay(target) {
  const { hostname, port } = new URL(target);
  const open = new Set();
  let down = false;
  const server = net.createServer((page) => {
    if (down) {
      page.destroy();
      return;
    }
    const app = net.connect(Number(port), hostname);
    const end = () => {
      page.destroy();
      app.destroy();
      open.delete(page);
      open.delete(app);
    };
    for (const socket of [page, app]) {
      open.add(socket);
      socket.on("error", end).on("close", end);
    }
    page.pipe(app);
    app.pipe(page);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const cut = () => {
    down = true;
    for (const socket of [...open]) socket.destroy();
  };
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    cut,
    restore() {
      down = false;
    },
    close() {
      cut();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

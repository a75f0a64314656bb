// The browser demo (`cargo run --example browser`) as a front-end developer opens it: its page
// in Chromium, every section used by clicking, as a person would.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS } from "./harness.mjs";

const js = fileURLToPath(new URL("../..", import.meta.url));
const demoPath = process.env.COURIER_DEMO ?? `${js}/../target/debug/examples/browser`;

let demo;
let browser;
let address;
before(async () => {
  demo = spawn(demoPath, ["--listen", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise((resolve, reject) => {
    demo.once("error", (e) => reject(new Error(`cannot start the demo ${demoPath}: ${e.message}`)));
    createInterface({ input: demo.stdout }).once("line", resolve);
  });
  address = line.match(/open (http:\/\/\S+)/)?.[1];
  assert.ok(address, `the demo prints the address to open: ${line}`);
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  demo?.kill("SIGINT");
});

test("the demo page: a typed call, a write with CSRF, an upload, a stream, a chat", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(address);

  // 1. The typed call filled the list.
  await page.locator("#todo-list li", { hasText: "open this page" }).waitFor();

  // 2. A write before signing in is refused; after, it goes through with the token.
  await page.fill("#create input", "before signing in");
  await page.click("#create button");
  await page.locator("#account-status.error", { hasText: "403" }).waitFor();
  await page.click("#login button");
  await page.locator("#account-status", { hasText: "signed in as ada" }).waitFor();
  await page.fill("#create input", "try courier");
  await page.click("#create button");
  await page.locator("#todo-list li", { hasText: "try courier" }).waitFor();

  // 3. An upload with progress.
  await page.setInputFiles("#attach input", {
    name: "notes.txt",
    mimeType: "text/plain",
    buffer: Buffer.alloc(200_000, "a"),
  });
  await page.click("#attach button");
  await page.locator("#upload-status", { hasText: '"bytes":200000' }).waitFor();
  assert.equal(await page.locator("#progress").evaluate((p) => p.value), 1);

  // 4. The stream ticks.
  await page.click("#clock-toggle");
  await page.locator("#clock-value", { hasText: "tick 2" }).waitFor({ timeout: 10_000 });
  await page.click("#clock-toggle");

  // 5. The chat room, from two tabs.
  const other = await browser.newPage();
  await other.goto(address);
  await page.fill("#say input", "hello from the first tab");
  // The second tab joins; say it until it hears it (joining takes a moment).
  for (let i = 0; i < 50; i++) {
    await page.click("#say button");
    if (await other.locator("#messages li", { hasText: "hello from the first tab" }).count()) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await other.locator("#messages li", { hasText: "hello from the first tab" }).first().waitFor();
  assert.deepEqual(errors, []);
});

// The backend-for-frontend's page: courier's browser caller against this origin's proxy route,
// and the app's own routes with fetch.
import { createProxyCaller, HTTPError } from "/pkg/index.js";

const routes = await (await fetch("/routes.json")).json();
const caller = createProxyCaller(routes, { proxyPath: { ws: "/api/ws" }, timeout: 10_000 });

const $ = (id) => document.getElementById(id);
const say = (id, text, failed = false) => {
  $(id).textContent = text;
  $(id).className = failed ? "error" : "";
};
const explain = (error) =>
  error instanceof HTTPError ? `${error.status}: ${JSON.stringify(error.data)}` : String(error);

async function showTodos() {
  const todos = await caller.todos.list();
  $("todo-list").replaceChildren(
    ...todos.map((todo) =>
      Object.assign(document.createElement("li"), { textContent: `${todo.title} (${todo.owner})` }),
    ),
  );
}
await showTodos();

$("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  const answer = await fetch("/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user: event.target.user.value }),
  });
  say("account-status", answer.ok ? `signed in as ${(await answer.json()).user}` : await answer.text(), !answer.ok);
});
$("logout").addEventListener("click", async () => {
  await fetch("/logout", { method: "POST" });
  say("account-status", "signed out");
});

$("create").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const todo = await caller.todos.create({ title: event.target.title.value });
    say("todo-status", `added #${todo.id}`);
    await showTodos();
  } catch (error) {
    say("todo-status", explain(error), true);
  }
});

$("refresh").addEventListener("click", async () => {
  const answer = await fetch("/summary");
  $("summary-value").textContent = await answer.text();
});

let clock = null;
$("clock-toggle").addEventListener("click", async () => {
  if (clock) {
    clock.close();
    clock = null;
    $("clock-toggle").textContent = "Start the clock";
    return;
  }
  clock = caller.live.clock();
  $("clock-toggle").textContent = "Stop the clock";
  try {
    for await (const event of clock) $("clock-value").textContent = `tick ${event.data.n}`;
  } catch (error) {
    $("clock-value").textContent = explain(error);
  }
});

const room = caller.live.chat("lobby");
$("say").addEventListener("submit", (event) => {
  event.preventDefault();
  room.send({ text: event.target.text.value });
});
(async () => {
  for await (const message of room) {
    $("messages").append(Object.assign(document.createElement("li"), { textContent: message.text }));
  }
})();

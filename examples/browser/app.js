// The demo page: courier's browser caller against this origin's proxy route.
import { createProxyCaller, HTTPError } from "/pkg/index.js";

const routes = await (await fetch("/routes.json")).json();
const caller = createProxyCaller(routes, {
  proxyPath: { ws: "/api/ws" },
  timeout: 10_000,
  onError: (error) => console.warn("courier:", error.status, error.data),
});

const $ = (id) => document.getElementById(id);
const say = (id, text, failed = false) => {
  $(id).textContent = text;
  $(id).className = failed ? "error" : "";
};
const explain = (error) =>
  error instanceof HTTPError ? `${error.status}: ${JSON.stringify(error.data)}` : String(error);

// 1. A typed call.
async function showTodos() {
  const todos = await caller.todos.list();
  $("todo-list").replaceChildren(
    ...todos.map((todo) => Object.assign(document.createElement("li"), { textContent: todo.title })),
  );
}
await showTodos();

// 2. Sign in, then write: the CSRF header goes with the write by itself.
$("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const me = await caller.account.login({ user: event.target.user.value });
    say("account-status", `signed in as ${me.user}`);
  } catch (error) {
    say("account-status", explain(error), true);
  }
});
$("create").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const todo = await caller.todos.create({ title: event.target.title.value });
    say("account-status", `added #${todo.id}`);
    await showTodos();
  } catch (error) {
    say("account-status", `${explain(error)} (sign in first)`, true);
  }
});

// 3. An upload with progress.
$("attach").addEventListener("submit", async (event) => {
  event.preventDefault();
  const file = event.target.file.files[0];
  if (!file) return say("upload-status", "choose a file first", true);
  const form = new FormData();
  form.append("file", file);
  try {
    const answer = await caller.todos
      .with({ onUploadProgress: ({ percent }) => ($("progress").value = percent) })
      .attach(form);
    say("upload-status", `uploaded: ${JSON.stringify(answer.received)}`);
  } catch (error) {
    say("upload-status", explain(error), true);
  }
});

// 4. A stream: started and stopped with the button.
let clock = null;
$("clock-toggle").addEventListener("click", async () => {
  if (clock) {
    clock.close();
    clock = null;
    $("clock-toggle").textContent = "Start";
    return;
  }
  clock = caller.live.clock();
  $("clock-toggle").textContent = "Stop";
  try {
    for await (const event of clock) $("clock-value").textContent = `tick ${event.data.n}`;
  } catch (error) {
    $("clock-value").textContent = explain(error);
  }
});

// 5. A chat channel.
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

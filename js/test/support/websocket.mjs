// A fake WebSocket for the unit tests: records what the channel does and lets the test play
// the server (open, message, close).

export class FakeWebSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;
  /** Every socket made, in order. */
  static sockets = [];

  constructor(url, protocols) {
    this.url = new URL(url);
    this.protocols = protocols;
    this.readyState = FakeWebSocket.CONNECTING;
    this.binaryType = "blob";
    this.sent = [];
    this.closedWith = undefined;
    this.onopen = null;
    this.onmessage = null;
    this.onclose = null;
    this.onerror = null;
    FakeWebSocket.sockets.push(this);
  }

  send(data) {
    if (this.readyState === FakeWebSocket.CONNECTING) throw new Error("InvalidStateError: still connecting");
    if (this.readyState !== FakeWebSocket.OPEN) return;
    this.sent.push(data);
  }

  close(code, reason) {
    if (code !== undefined && code !== 1000 && (code < 3000 || code > 4999)) {
      throw new Error(`InvalidAccessError: close code ${code}`);
    }
    this.closedWith = { code, reason };
    this.readyState = FakeWebSocket.CLOSING;
  }

  // The server's side.
  open() {
    this.readyState = FakeWebSocket.OPEN;
    this.onopen?.({ type: "open" });
  }

  receive(data) {
    this.onmessage?.({ type: "message", data });
  }

  drop(code, reason = "") {
    this.readyState = FakeWebSocket.CLOSED;
    if (code === 1006) this.onerror?.({ type: "error" });
    this.onclose?.({ type: "close", code, reason, wasClean: code !== 1006 });
  }

  /** The frames sent, JSON-parsed. */
  get frames() {
    return this.sent.map((text) => JSON.parse(text));
  }
}

/** Installs the fake for test `t`; returns the class (its `sockets` list reset). */
export function fakeWebSocket(t) {
  const original = globalThis.WebSocket;
  FakeWebSocket.sockets = [];
  globalThis.WebSocket = FakeWebSocket;
  t.after(() => {
    globalThis.WebSocket = original;
  });
  return FakeWebSocket;
}

/**
 * The event-stream parser: bytes in any chunking → events, by the WHATWG HTML standard's
 * "event stream interpretation" (the same rules as courier's Rust parser).
 *
 * @module
 */

/** What the parser hands out, in stream order. */
export type ParsedItem =
  /** A dispatched event: its type (`message` when none was given), data, and the last event id at dispatch (`""` when none). */
  | { readonly kind: "event"; readonly event: string; readonly data: string; readonly id: string }
  /** A valid `retry` field: the reconnection time in milliseconds. */
  | { readonly kind: "retry"; readonly ms: number };

/** The default bound of a line and of an event's data, in UTF-16 code units. */
export const DEFAULT_LIMIT = 16 * 1024 * 1024;

/**
 * An incremental event-stream parser.
 *
 * One leading byte order mark is dropped; lines end in CRLF, LF or CR (a CR ending one chunk
 * and an LF starting the next are one line end); bytes are decoded as UTF-8 with invalid
 * sequences replaced, a character split across chunks joined; lines starting with `:` are
 * comments; a line without a colon is a field with an empty value; one space after the colon
 * is dropped; `data` lines accumulate joined with LF; `event` names the event; `id` sets the
 * last event id unless it contains NUL; `retry` sets the reconnection time when it is all
 * ASCII digits; other fields are ignored; a blank line commits the last event id and dispatches
 * the block's event when it has data. {@link EventStreamParser.finish} drops an unterminated
 * line and an undispatched block.
 */
export class EventStreamParser {
  #decoder = new TextDecoder("utf-8");
  #line = "";
  #afterCR = false;
  #data = "";
  #event = "";
  #idBuffer: string;
  #lastEventId: string;
  readonly #limit: number;

  /**
   * @param lastEventId - the id a resumed stream starts from
   * @param limit - the longest line or event data; past it {@link EventStreamParser.push} throws
   */
  constructor(lastEventId = "", limit = DEFAULT_LIMIT) {
    this.#idBuffer = lastEventId;
    this.#lastEventId = lastEventId;
    this.#limit = limit;
  }

  /** The last event id committed by a blank line; `""` when none. */
  get lastEventId(): string {
    return this.#lastEventId;
  }

  /**
   * Parses the next chunk of the body and returns what it completed.
   *
   * @throws RangeError when a line or an event's data grows past the limit
   */
  push(chunk: Uint8Array): ParsedItem[] {
    return this.#text(this.#decoder.decode(chunk, { stream: true }));
  }

  /** Ends the body: an unterminated line and an undispatched block are dropped. */
  finish(): void {
    this.#decoder.decode();
    this.#line = "";
    this.#data = "";
    this.#event = "";
    this.#afterCR = false;
  }

  /** Starts a new body (a reconnection): the last event id is kept, everything else is fresh. */
  restart(): void {
    this.finish();
    this.#decoder = new TextDecoder("utf-8");
    this.#idBuffer = this.#lastEventId;
  }

  #text(text: string): ParsedItem[] {
    const out: ParsedItem[] = [];
    let start = 0;
    if (this.#afterCR && text.length > 0) {
      this.#afterCR = false;
      if (text.charCodeAt(0) === 10) start = 1;
    }
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.#line + text.slice(start, i);
      this.#line = "";
      this.#check(line.length);
      this.#handle(line, out);
      if (c === 13) {
        if (i + 1 === text.length) this.#afterCR = true;
        else if (text.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    if (start < text.length) {
      this.#line += text.slice(start);
      this.#check(this.#line.length);
    }
    return out;
  }

  #check(length: number): void {
    if (length > this.#limit) {
      throw new RangeError(`an event-stream line or event is longer than ${this.#limit} characters`);
    }
  }

  #handle(line: string, out: ParsedItem[]): void {
    if (line === "") {
      this.#dispatch(out);
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(":");
    let field = line;
    let value = "";
    if (colon >= 0) {
      field = line.slice(0, colon);
      value = line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
    }
    switch (field) {
      case "data":
        this.#data += `${value}\n`;
        this.#check(this.#data.length);
        break;
      case "event":
        this.#event = value;
        break;
      case "id":
        if (!value.includes("\0")) this.#idBuffer = value;
        break;
      case "retry":
        if (/^[0-9]+$/.test(value)) out.push({ kind: "retry", ms: Number(value) });
        break;
      default:
        break;
    }
  }

  #dispatch(out: ParsedItem[]): void {
    this.#lastEventId = this.#idBuffer;
    if (this.#data === "") {
      this.#event = "";
      return;
    }
    out.push({
      kind: "event",
      event: this.#event === "" ? "message" : this.#event,
      data: this.#data.slice(0, -1),
      id: this.#lastEventId,
    });
    this.#data = "";
    this.#event = "";
  }
}

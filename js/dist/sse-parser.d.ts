/**
 * The event-stream parser: bytes in any chunking → events, by the WHATWG HTML standard's
 * "event stream interpretation" (the same rules as courier's Rust parser).
 *
 * @module
 */
/** What the parser hands out, in stream order. */
export type ParsedItem = 
/** A dispatched event: its type (`message` when none was given), data, and the last event id at dispatch (`""` when none). */
{
    readonly kind: "event";
    readonly event: string;
    readonly data: string;
    readonly id: string;
}
/** A valid `retry` field: the reconnection time in milliseconds. */
 | {
    readonly kind: "retry";
    readonly ms: number;
};
/** The default bound of a line and of an event's data, in UTF-16 code units. */
export declare const DEFAULT_LIMIT: number;
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
export declare class EventStreamParser {
    #private;
    /**
     * @param lastEventId - the id a resumed stream starts from
     * @param limit - the longest line or event data; past it {@link EventStreamParser.push} throws
     */
    constructor(lastEventId?: string, limit?: number);
    /** The last event id committed by a blank line; `""` when none. */
    get lastEventId(): string;
    /**
     * Parses the next chunk of the body and returns what it completed.
     *
     * @throws RangeError when a line or an event's data grows past the limit
     */
    push(chunk: Uint8Array): ParsedItem[];
    /** Ends the body: an unterminated line and an undispatched block are dropped. */
    finish(): void;
    /** Starts a new body (a reconnection): the last event id is kept, everything else is fresh. */
    restart(): void;
}

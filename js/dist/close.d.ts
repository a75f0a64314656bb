/**
 * What a channel does when its socket closes, by close code: end, reconnect, or end with a
 * {@link ChannelError} (`closed`, or `refused` for courier's 4400–4499); and whether the close
 * says the channel's position could not be honoured. The table is in the docs of `PushChannel`
 * (`ws.ts`).
 *
 * @module
 */
import { ChannelError } from "./errors.js";
/**
 * How the reason of a 1012 close starts when the server could not honour the hello's `since`
 * (docs/PROTOCOL.md, "Positions and recovery"): messages after the position are gone.
 */
export declare const MISSED_REASON = "messages were missed:";
/**
 * What follows a close with `code` and `reason`: `"end"` (1000), `"reconnect"`, or the error
 * the channel ends with.
 */
export declare function afterClose(code: number, reason: string, path: string): "end" | "reconnect" | ChannelError;
/**
 * Whether a close with `code` and `reason` says messages after the channel's position were
 * missed (1012, the reason starting {@link MISSED_REASON}): the channel forgets its position
 * and its next connection starts afresh (`since: null`). Any other close keeps it.
 */
export declare function missedMessages(code: number, reason: string): boolean;

/**
 * What a channel does when its socket closes, by close code: end, reconnect, or end with a
 * {@link ChannelError} (`closed`, or `refused` for courier's 4400–4499). The table is in the
 * docs of `PushChannel` (`ws.ts`).
 *
 * @module
 */
import { ChannelError } from "./errors.js";
/**
 * What follows a close with `code` and `reason`: `"end"` (1000), `"reconnect"`, or the error
 * the channel ends with.
 */
export declare function afterClose(code: number, reason: string, path: string): "end" | "reconnect" | ChannelError;

/**
 * What a channel does when its socket closes, by close code: end, reconnect, or end with a
 * {@link ChannelError} (`closed`, or `refused` for courier's 4400–4499); and whether the close
 * says the channel's position could not be honoured. The table is in the docs of `PushChannel`
 * (`ws.ts`).
 *
 * @module
 */
import { ChannelError } from "./errors.js";
/** The close codes after which a channel reconnects. */
const RECONNECT = new Set([1001, 1005, 1006, 1011, 1012, 1013, 1014]);
/**
 * How the reason of a 1012 close starts when the server could not honour the hello's `since`
 * (docs/PROTOCOL.md, "Positions and recovery"): messages after the position are gone.
 */
export const MISSED_REASON = "messages were missed:";
/** A refusal's reason: `"CODE: message"`, the code as the proxy's error bodies write them. */
const REFUSAL = /^([A-Z][A-Z0-9_]*): /;
/**
 * What follows a close with `code` and `reason`: `"end"` (1000), `"reconnect"`, or the error
 * the channel ends with.
 */
export function afterClose(code, reason, path) {
    if (code === 1000)
        return "end";
    if (RECONNECT.has(code))
        return "reconnect";
    if (code >= 4400 && code <= 4499) {
        const status = code - 4000;
        return new ChannelError("refused", `the channel was refused (${status})${reason ? `: ${reason}` : ""}`, path, {
            code,
            reason,
            status,
            refusal: REFUSAL.exec(reason)?.[1],
        });
    }
    return new ChannelError("closed", `the channel was closed with ${code}${reason ? `: ${reason}` : ""}`, path, {
        code,
        reason,
    });
}
/**
 * Whether a close with `code` and `reason` says messages after the channel's position were
 * missed (1012, the reason starting {@link MISSED_REASON}): the channel forgets its position
 * and its next connection starts afresh (`since: null`). Any other close keeps it.
 */
export function missedMessages(code, reason) {
    return code === 1012 && reason.startsWith(MISSED_REASON);
}
//# sourceMappingURL=close.js.map
/**
 * The options of the proxy caller, of one call, and of its channels' sockets.
 *
 * @module
 */
export {};
//# sourceMappingURL=options.js.map
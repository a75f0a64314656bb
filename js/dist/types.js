/**
 * The client's type, inferred from the routes record's type: dotted paths become nested
 * groups, each endpoint a function of its variables to its response (an HTTP call), an
 * {@link EventStream} (a stream) or a {@link Channel} (a channel).
 *
 * @module
 */
export {};
//# sourceMappingURL=types.js.map
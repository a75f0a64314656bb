/**
 * The routes record: what `courier routes --ts` writes (or a hand-written record of the same
 * shape), the input of {@link createProxyCaller}.
 *
 * @module
 */
export {};
//# sourceMappingURL=routes.js.map
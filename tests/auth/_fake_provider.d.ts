/** Types of `_fake_provider.mjs`. */
/** The fake OAuth provider's request handler. */
export function fakeProvider(request: Request): Promise<Response>;

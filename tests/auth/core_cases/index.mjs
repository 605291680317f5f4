/**
 * The core's test cases, written once and run in three runtimes: Deno
 * (`tests/auth/core.test.ts`, against `mod.ts`), workerd through Miniflare
 * (`tests/workerd/core.test.ts`, against the bundled core) and Node 20
 * (`tests/npm/core.test.mjs`, against the npm mirror). Plain JavaScript importing only
 * `node:assert/strict`, so every runtime loads these files unchanged.
 *
 * Each case receives `{ api, providerUrl }`: `api` is the core's public module, `providerUrl`
 * the origin of a running fake OAuth provider (`../_fake_provider.mjs`) for cases marked
 * `provider: true`.
 *
 * @module
 */
import "./password.mjs";
import "./token.mjs";
import "./session.mjs";
import "./revocation.mjs";
import "./access.mjs";
import "./relay.mjs";
import "./oauth.mjs";
import "./totp.mjs";

export { cases } from "./_harness.mjs";

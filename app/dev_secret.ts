/**
 * Secrets of the reference app's sites: read from the environment, with a fixed development
 * default so `deno task start` works with nothing set. In production a missing secret stops
 * the app at start instead.
 *
 * @module
 */
import type { AppEnv } from "./env.ts";

/** The secret in variable `name`, or (development only) a fixed default derived from it. */
export function siteSecret(env: AppEnv, name: string): string {
  const value = env.vars[name];
  if (value) return value;
  if (env.MODE === "production") throw new Error(`${name} must be set in production`);
  return `development-only-${name.toLowerCase()}-do-not-use-in-production`;
}

/**
 * The names the app shows for OAuth provider ids: `github` is "GitHub".
 *
 * @module
 */

const NAMES: Record<string, string> = {
  google: "Google",
  github: "GitHub",
  microsoft: "Microsoft",
};

/**
 * A provider's name as people write it; an unknown id is shown with a capital first letter.
 *
 * @example
 * ```ts
 * import { providerName } from "./providers.ts";
 * providerName("github"); // "GitHub"
 * ```
 */
export function providerName(id: string): string {
  return NAMES[id] ?? (id.slice(0, 1).toUpperCase() + id.slice(1));
}

/**
 * Where the `metrics` handler gets its answer in a worker process: the sum of every worker's
 * registry, which the primary collects (as the admin API's `GET /metrics` answers), so that a
 * scrape through a site sees the whole server, whichever worker it reaches. Unset (one
 * process): the handler answers from this process's registry.
 *
 * @module
 */

let source: (() => Promise<string>) | undefined;

/**
 * Sets (or, with `undefined`, clears) where the `metrics` handler gets the text it answers.
 *
 * @example
 * ```ts
 * import { sharedScrape, useSharedScrape } from "./shared.ts";
 * useSharedScrape(() => Promise.resolve("# summed\n"));
 * sharedScrape(); // the function above
 * useSharedScrape(undefined);
 * ```
 */
export function useSharedScrape(fn: (() => Promise<string>) | undefined): void {
  source = fn;
}

/** The source set by {@linkcode useSharedScrape}, if any. */
export function sharedScrape(): (() => Promise<string>) | undefined {
  return source;
}

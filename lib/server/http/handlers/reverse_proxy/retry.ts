/**
 * `load_balancing.retry_match`, as current Caddy (`reverseproxy.go` `tryAgain` and
 * `reverseProxy`; the answer-based part since v2.11.3, caddyserver/caddy#7569):
 *
 * - after a failure that may have reached the upstream (not a dial failure), the request is
 *   tried again when any set matches, with `{http.reverse_proxy.is_transport_error}` true while
 *   they are looked at (without `retry_match`, only a GET is);
 * - once an upstream answered, the sets holding an `expression` matcher are looked at with the
 *   answer's placeholders (`{http.reverse_proxy.status_code}`, `.header.*`); a match tries the
 *   next upstream. Such a retry does not count as a failure of the upstream (it answered), and
 *   when no try is left the answer's status is the error's. Sets without an expression only
 *   say which requests may be retried after a failure: they never retry an answer.
 *
 * @module
 */
import type { ProvisionContext } from "../../../module/mod.ts";
import type { RequestContext } from "../../context.ts";
import { compileMatcherSets, provisionMatcherSets } from "../../routes.ts";

/** An upstream answer that `retry_match` sent to the next upstream. */
export class RetriedAnswer extends Error {
  /** The answer's status, the error's once no try is left. */
  readonly status: number;
  constructor(status: number) {
    super(`upstream response matched retry_match (status ${status})`);
    this.status = status;
  }
}

/** The compiled `retry_match` sets. */
export interface RetryMatch {
  /** After a failure past the dial: whether the request may be tried again. */
  afterFailure(c: RequestContext): boolean;
  /** Once an upstream answered (`c.proxy` holds the answer): whether to try the next one. */
  afterAnswer(c: RequestContext): boolean;
}

/** Provisions `retry_match` (`raw`, at `where`); null when it is not set. */
export async function provisionRetryMatch(
  raw: unknown,
  ctx: ProvisionContext,
  where: string,
): Promise<RetryMatch | null> {
  const sets = await provisionMatcherSets(raw, ctx, where);
  const any = compileMatcherSets(sets);
  if (!any) return null;
  const list = raw as Record<string, unknown>[];
  const answer = compileMatcherSets(
    sets.filter((_, i) => Object.hasOwn(list[i] ?? {}, "expression")),
  );
  return {
    afterFailure(c) {
      if (!c.proxy) return any(c);
      c.proxy.transportError = true;
      try {
        return any(c);
      } finally {
        c.proxy.transportError = false;
      }
    },
    afterAnswer: (c) => answer !== null && answer(c),
  };
}

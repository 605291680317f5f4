/**
 * The `pki` app: CAs from the `pki` global option and from `acme_server` directives (also
 * those nested in `handle`, `route` or named routes), with `skip_install_trust` applied.
 *
 * @module
 */
import type { Pairing } from "./listeners.ts";
import type { CAJSON } from "./options_tls.ts";
import type { ConfigValue } from "../../caddyfile/types.ts";

/** A CA produced by a directive (`acme_server`), with its id. */
export interface DirectiveCA {
  /** CA id. */
  id: string;
  /** The CA's JSON. */
  ca: CAJSON;
}

/** The pki app's JSON, or undefined when it has no CA. */
export function buildPKIApp(
  pairings: Pairing[],
  options: Map<string, unknown>,
): Record<string, unknown> | undefined {
  const skipTrust = options.has("skip_install_trust");
  const autoHTTPSOff = ((options.get("auto_https") as string[] | undefined) ?? []).includes("off");
  const cas = new Map<string, CAJSON>(
    (options.get("pki") as Map<string, CAJSON> | undefined) ?? [],
  );
  if (skipTrust) { for (const ca of cas.values()) ca.install_trust = false; }
  // CAs of acme_server directives: in sites, then in named routes
  const named = (options.get("named_route_side_values") as ConfigValue[] | undefined) ?? [];
  const values = [
    ...pairings.flatMap((p) => p.blocks.flatMap((sb) => sb.pile.get("pki.ca") ?? [])),
    ...named.filter((v) => v.class === "pki.ca"),
  ];
  for (const v of values) {
    const { id, ca } = v.value as DirectiveCA;
    if (skipTrust) ca.install_trust = false;
    if (!cas.has(id)) cas.set(id, ca);
  }
  if (cas.size === 0 && skipTrust && !autoHTTPSOff) cas.set("local", { install_trust: false });
  if (cas.size === 0) return undefined;
  return { certificate_authorities: Object.fromEntries(cas) };
}

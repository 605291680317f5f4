/**
 * TLS connection policies of a server: one per `tls` directive (matched by the site's
 * hosts), shields that keep a wildcard policy's client authentication off more specific
 * hosts, a catch-all policy when some address needs TLS, and the consolidation that merges
 * equivalent policies — Caddy's rules, so the same Gatehousefile gives the same policies.
 *
 * @module
 */
import { matchWildcard } from "./certnames.ts";
import { siteError, type Where } from "../../caddyfile/dispenser.ts";
import { goStableSort } from "../../caddyfile/gosort.ts";
import type { AdaptContext } from "../../caddyfile/helper.ts";
import { ports, type SiteBlock } from "./listeners.ts";
import type { ServerJSON } from "./server_json.ts";
import { listenersUseAnyPortOtherThan } from "./server_json.ts";
import { jsonEqual } from "../../caddyfile/types.ts";

/** A TLS connection policy's JSON (`match`, `certificate_selection`, `alpn`, ...). */
export type ConnPolicy = Record<string, unknown> & {
  match?: Record<string, unknown> & { sni?: string[] };
  certificate_selection?: Record<string, unknown> & { any_tag?: string[] };
};

const SETTINGS = [
  "certificate_selection",
  "cipher_suites",
  "curves",
  "alpn",
  "protocol_min",
  "protocol_max",
  "client_authentication",
  "default_sni",
  "fallback_sni",
  "insecure_secrets_log",
];

/** True when the policy changes nothing (no settings besides its matchers). */
export function settingsEmpty(cp: ConnPolicy): boolean {
  return SETTINGS.every((k) => cp[k] === undefined || cp[k] === "");
}

function withoutMatch(cp: ConnPolicy): ConnPolicy {
  const { match: _, ...rest } = cp;
  return rest;
}

function goList(v: unknown): string {
  return Array.isArray(v) ? `[${v.join(" ")}]` : String(v);
}

/** The per-server builder of connection policies, fed one site block at a time. */
export function addConnectionPolicies(
  srv: ServerJSON,
  ctx: AdaptContext,
  { httpPort, httpsPort }: { httpPort: string; httpsPort: string },
): { addSite(sb: SiteBlock, hosts: string[]): void; finish(): void } {
  const defaultSNI = stringOption(ctx, "default_sni");
  const fallbackSNI = stringOption(ctx, "fallback_sni");
  const policies = (): ConnPolicy[] => (srv.tls_connection_policies ??= []) as ConnPolicy[];
  let hasCatchAll = false;
  let addressQualifiesForTLS = false;
  let autoHTTPSWillAddConnPolicy = !srv.automatic_https?.disable;
  const emptyPolicies: ConnPolicy[] = [];
  // the `tls` directive each policy comes from, for errors
  const origins = new WeakMap<ConnPolicy, Where>();

  return {
    addSite(sb, hosts) {
      const forced = sb.pile.has("tls.force_automate") ? new Set(hosts) : new Set<string>();
      const cpVals = sb.pile.get("tls.connection_policy");
      if (cpVals) {
        for (const v of cpVals) {
          const cp = v.value as ConnPolicy;
          if (v.token) origins.set(cp, v.token);
          for (const h of hosts) {
            if (h === defaultSNI) {
              hosts.push("");
              cp.default_sni = defaultSNI;
              break;
            }
            if (h === fallbackSNI) {
              hosts.push("");
              cp.fallback_sni = fallbackSNI;
              break;
            }
          }
          if (hosts.length > 0) {
            hosts.sort();
            cp.match = { sni: [...hosts] };
          } else {
            if (defaultSNI) cp.default_sni = defaultSNI;
            else delete cp.default_sni;
            if (fallbackSNI) cp.fallback_sni = fallbackSNI;
            else delete cp.fallback_sni;
          }
          if (!settingsEmpty(cp) || hosts.some((h) => forced.has(h))) {
            policies().push(cp);
            hasCatchAll = hosts.length === 0;
          } else if (hosts.length > 0) emptyPolicies.push(cp);
        }
      } else {
        const specific = hosts.filter((h) => h !== "" && !h.includes("*")).sort();
        if (specific.length > 0) emptyPolicies.push({ match: { sni: specific } });
      }

      for (const a of sb.parsedKeys) {
        if (listenersUseAnyPortOtherThan(srv.listen ?? [], httpPort)) {
          if (a.scheme === "http" && a.host !== "") {
            const ah = srv.automatic_https ??= {};
            const skip = (ah.skip ??= []);
            if (!skip.includes(a.host)) skip.push(a.host);
          }
        }
        const hasTLS = (cpVals !== undefined && cpVals.length > 0) ||
          (a.host !== "" && !(srv.automatic_https?.skip ?? []).includes(a.host));
        if (a.scheme === "https" || (a.scheme !== "http" && a.port !== httpPort && hasTLS)) {
          addressQualifiesForTLS = true;
        }
        autoHTTPSWillAddConnPolicy = autoHTTPSWillAddConnPolicy &&
          (a.port === httpsPort || (a.port !== httpPort && a.host !== ""));
      }
    },

    finish() {
      const list = policies();
      // shields: a copy of a client-auth wildcard policy without client auth, above it, for
      // the more specific hosts of sites that configure no TLS of their own
      const wildcards = list.map((cp) =>
        cp.client_authentication === undefined || !cp.match?.sni
          ? undefined
          : cp.match.sni.filter((n) => n.includes("*"))
      );
      const shielded: string[][] = list.map(() => []);
      for (const ecp of emptyPolicies) {
        for (const host of ecp.match?.sni ?? []) {
          const i = wildcards.findIndex((w) => w?.some((name) => matchWildcard(host, name)));
          if (i >= 0) shielded[i].push(host);
        }
      }
      for (let i = shielded.length - 1; i >= 0; i--) {
        if (shielded[i].length === 0) continue;
        const hosts = [...new Set(shielded[i].sort())];
        const shield: ConnPolicy = { ...list[i], match: { sni: hosts } };
        delete shield.client_authentication;
        const where = origins.get(list[i]);
        if (where) origins.set(shield, where);
        list.splice(i, 0, shield);
      }
      if (
        addressQualifiesForTLS && !hasCatchAll &&
        (list.length > 0 || !autoHTTPSWillAddConnPolicy || defaultSNI !== "" || fallbackSNI !== "")
      ) {
        const cp: ConnPolicy = {};
        if (defaultSNI) cp.default_sni = defaultSNI;
        if (fallbackSNI) cp.fallback_sni = fallbackSNI;
        list.push(cp);
      }
      const merged = consolidateConnPolicies(list, origins);
      if (merged.length > 0) srv.tls_connection_policies = merged;
      else delete srv.tls_connection_policies;
    },
  };
}

function stringOption(ctx: AdaptContext, name: string): string {
  const v = ctx.options.get(name);
  if (v !== undefined && typeof v !== "string") ctx.warnings.push({ message: "not a string type" });
  return typeof v === "string" ? v : "";
}

/**
 * Catch-all policies last, duplicates removed, equivalent policies merged (Caddy's rules).
 * A conflict between two policies is an error located at the `tls` directive of the second
 * (from `origins`, when known).
 */
export function consolidateConnPolicies(
  cps: ConnPolicy[],
  origins: WeakMap<ConnPolicy, Where> = new WeakMap(),
): ConnPolicy[] {
  goStableSort(cps, (a, b) => b.match === undefined && a.match !== undefined);
  for (let i = 0; i < cps.length; i++) {
    for (let j = 0; j < cps.length; j++) {
      if (j === i) continue;
      const a = cps[i], b = cps[j];
      if (jsonEqual(a, b)) {
        cps.splice(j, 1);
        i--;
        break;
      }
      if (
        i === j - 1 && a.match && b.match && Object.keys(a.match).length === 1 &&
        Object.keys(b.match).length === 1 && a.match.sni && b.match.sni &&
        jsonEqual(withoutMatch(a), withoutMatch(b))
      ) {
        a.match.sni = [...a.match.sni, ...b.match.sni];
        cps.splice(j, 1);
        i--;
        break;
      }
      if (jsonEqual(a.match ?? null, b.match ?? null)) {
        try {
          mergeInto(a, b);
        } catch (e) {
          const where = origins.get(b) ?? origins.get(a);
          throw where ? siteError(where, (e as Error).message) : e;
        }
        cps.splice(j, 1);
        i--;
        break;
      }
    }
  }
  return cps;
}

function mergeInto(a: ConnPolicy, b: ConnPolicy): void {
  const conflict = (what: string, x: unknown, y: unknown) =>
    new Error(
      `two policies with same match criteria have conflicting ${what}: ${goList(x)} vs. ${
        goList(y)
      }`,
    );
  const lists: [string, string][] = [["alpn", "ALPN"], ["cipher_suites", "cipher suites"]];
  for (const [k, what] of lists) {
    if (isSet(a[k]) && isSet(b[k]) && !jsonEqual(a[k], b[k])) throw conflict(what, a[k], b[k]);
  }
  if (a.client_authentication === undefined && b.client_authentication !== undefined) {
    throw new Error(
      `two policies with same match criteria have conflicting client auth configuration: ${
        JSON.stringify(a.client_authentication ?? null)
      } vs. ${JSON.stringify(b.client_authentication)}`,
    );
  }
  if (isSet(a.curves) && isSet(b.curves) && !jsonEqual(a.curves, b.curves)) {
    throw conflict("curves", a.curves, b.curves);
  }
  const strings: [string, string][] = [
    ["default_sni", "default SNI"],
    ["fallback_sni", "fallback SNI"],
    ["protocol_min", "min protocol"],
    ["protocol_max", "max protocol"],
  ];
  for (const [k, what] of strings) {
    if (isSet(a[k]) && isSet(b[k]) && a[k] !== b[k]) throw conflict(what, a[k], b[k]);
  }
  const as = a.certificate_selection, bs = b.certificate_selection;
  if (as && bs) {
    for (const k of ["serial_number", "subject_organization", "public_key_algorithm", "all_tags"]) {
      if (!jsonEqual(as[k] ?? null, bs[k] ?? null)) {
        throw new Error(
          `two policies with same match criteria have conflicting cert selections: ${
            JSON.stringify(as)
          } vs. ${JSON.stringify(bs)}`,
        );
      }
    }
  }
  for (
    const k of [
      "alpn",
      "cipher_suites",
      "client_authentication",
      "curves",
      ...strings.map((s) => s[0]),
    ]
  ) {
    if (!isSet(a[k]) && isSet(b[k])) a[k] = b[k];
  }
  if (!as && bs) a.certificate_selection = bs;
  else if (as && bs) {
    for (const tag of bs.any_tag ?? []) {
      if (!(as.any_tag ?? []).includes(tag)) as.any_tag = [...(as.any_tag ?? []), tag];
    }
  }
}

function isSet(v: unknown): boolean {
  if (v === undefined || v === null || v === "") return false;
  return !Array.isArray(v) || v.length > 0;
}

/** Refuses a server that would mix HTTP and HTTPS sites on one listener. */
export function detectConflictingSchemes(
  srv: ServerJSON,
  blocks: SiteBlock[],
  options: Map<string, unknown>,
): void {
  const { http, https } = ports(options);
  let mode = "";
  const listen = goList(srv.listen ?? []);
  const hasPolicies = (srv.tls_connection_policies?.length ?? 0) > 0;
  const setHTTP = (key: Where, original: string, scheme: string, host: string) => {
    if (mode === "HTTPS") {
      let msg =
        `server listening on ${listen} is configured for HTTPS and cannot natively multiplex HTTP and HTTPS: ${original}`;
      if (scheme === "" && host === "") msg += " (try specifying https:// in the address)";
      throw siteError(key, msg);
    }
    if (hasPolicies) {
      throw siteError(
        key,
        `server listening on ${listen} is HTTP, but attempts to configure TLS connection policies`,
      );
    }
    mode = "HTTP";
  };
  const setHTTPS = (key: Where, original: string) => {
    if (mode === "HTTP") {
      throw siteError(
        key,
        `server listening on ${listen} is configured for HTTP and cannot natively multiplex HTTP and HTTPS: ${original}`,
      );
    }
    mode = "HTTPS";
  };
  for (const sb of blocks) {
    sb.parsedKeys.forEach((a, i) => {
      const key = sb.block.keys[i];
      if (a.scheme === "http" || a.port === http) setHTTP(key, a.original, a.scheme, a.host);
      else if (a.scheme === "https" || a.port === https || hasPolicies) {
        setHTTPS(key, a.original);
      } else if (a.host === "") setHTTP(key, a.original, a.scheme, a.host);
    });
  }
}

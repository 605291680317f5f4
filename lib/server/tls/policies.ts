/**
 * A server's `tls_connection_policies` (Caddy's JSON). The certificate of each handshake is
 * chosen by server name (SNI) from the `tls` app's cache, among those a policy's
 * `certificate_selection` tags allow (`TlsApp.getter`). The listeners offer ALPN `h2` and
 * `http/1.1` and negotiate TLS 1.2 or 1.3 (rustls defaults): policy fields they cannot honour
 * are refused at load with an `unsupported` error.
 *
 * @module
 */
import { Decoder, type Raw } from "../config/decode.ts";
import { ConfigError } from "../config/error.ts";

/** One decoded connection policy. */
export interface ConnectionPolicy {
  /** `match.sni`: names the policy is meant for (used to choose the certificate). */
  sni: string[];
  /** `certificate_selection.any_tag`. */
  anyTag: string[];
  /** `certificate_selection.all_tags`. */
  allTags: string[];
  /** `default_sni`: the name used for clients that send no SNI. */
  defaultSni?: string;
  /** `fallback_sni`: the name used when no certificate matches the client's SNI. */
  fallbackSni?: string;
  /** `client_authentication` as configured (provisioned by the server: client_auth/). */
  clientAuth?: Raw;
}

const UNSUPPORTED: Record<string, string> = {
  cipher_suites: "Deno.serve does not let the cipher suites be chosen",
  curves: "Deno.serve does not let the key exchange curves be chosen",
  insecure_secrets_log: "Deno.serve cannot write TLS secrets",
  drop: "Deno.serve cannot drop handshakes by policy",
};

function strings(d: Decoder, key: string): string[] {
  const v = d.value(key);
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
    d.failAt(key, "must be an array of strings");
  }
  return v as string[];
}

function object(d: Decoder, key: string): Decoder | undefined {
  const v = d.value(key);
  if (v === undefined) return undefined;
  if (typeof v !== "object" || v === null || Array.isArray(v)) d.failAt(key, "must be an object");
  return new Decoder(v as Raw, d.at(key));
}

function checkVersion(d: Decoder, key: string, deno: string): void {
  const v = d.value(key);
  if (v === undefined) return;
  if (v !== "tls1.2" && v !== "tls1.3") d.failAt(key, 'must be "tls1.2" or "tls1.3"');
  if (v !== deno) {
    d.failAt(
      key,
      `${v} cannot be enforced: Deno.serve always negotiates TLS 1.2 or 1.3 ` +
        `(only ${key}: "${deno}" is accepted)`,
      "unsupported",
    );
  }
}

/** Decodes `tls_connection_policies`; throws a ConfigError for what Deno cannot do. */
export function parseConnectionPolicies(raw: unknown, where: string): ConnectionPolicy[] {
  if (!Array.isArray(raw)) {
    throw new ConfigError("invalid_config", `${where}: must be an array`, { path: where });
  }
  return raw.map((p, i) => {
    const policy = Decoder.of(p, `${where}[${i}]`);
    for (const [k, why] of Object.entries(UNSUPPORTED)) {
      if (policy.value(k) !== undefined) policy.failAt(k, `not supported (${why})`, "unsupported");
    }
    policy.fields([
      "match",
      "certificate_selection",
      "alpn",
      "protocol_min",
      "protocol_max",
      "default_sni",
      "fallback_sni",
      "client_authentication",
    ]);
    const match = object(policy, "match") ?? new Decoder({}, policy.at("match"));
    for (const k of Object.keys(match.raw)) {
      if (k !== "sni") {
        match.failAt(
          k,
          "not supported (Deno.serve chooses no policy per connection; " +
            "only match.sni is accepted, to choose the certificate)",
          "unsupported",
        );
      }
    }
    const sel = object(policy, "certificate_selection") ??
      new Decoder({}, policy.at("certificate_selection"));
    for (const k of Object.keys(sel.raw)) {
      if (k !== "any_tag" && k !== "all_tags") {
        sel.failAt(k, "not supported (only any_tag and all_tags)", "unsupported");
      }
    }
    const alpn = strings(policy, "alpn");
    if (alpn.length) {
      const set = new Set(alpn);
      if (set.size !== 2 || !set.has("h2") || !set.has("http/1.1")) {
        policy.failAt(
          "alpn",
          `Deno.serve always offers exactly "h2" and "http/1.1"; got ${JSON.stringify(alpn)}`,
          "unsupported",
        );
      }
    }
    checkVersion(policy, "protocol_min", "tls1.2");
    checkVersion(policy, "protocol_max", "tls1.3");
    for (const k of ["default_sni", "fallback_sni"]) {
      const v = policy.value(k);
      if (v !== undefined && typeof v !== "string") policy.failAt(k, "must be a string");
    }
    return {
      sni: strings(match, "sni").map((s) => s.toLowerCase()),
      anyTag: strings(sel, "any_tag"),
      allTags: strings(sel, "all_tags"),
      defaultSni: (policy.value("default_sni") as string | undefined)?.toLowerCase(),
      fallbackSni: (policy.value("fallback_sni") as string | undefined)?.toLowerCase(),
      clientAuth: object(policy, "client_authentication")?.raw,
    };
  });
}

/** Host names of the `host` matchers in a server's routes (subroutes included). */
export function routeHostNames(routes: unknown): string[] {
  const out: string[] = [];
  const walk = (rs: unknown) => {
    if (!Array.isArray(rs)) return;
    for (const r of rs) {
      if (typeof r !== "object" || r === null) continue;
      const route = r as Raw;
      if (Array.isArray(route.match)) {
        for (const set of route.match) {
          const hosts = (set as Raw | null)?.host;
          if (Array.isArray(hosts)) {
            for (const h of hosts) if (typeof h === "string") out.push(h.toLowerCase());
          }
        }
      }
      if (Array.isArray(route.handle)) { for (const h of route.handle) walk((h as Raw)?.routes); }
    }
  };
  walk(routes);
  return [...new Set(out)];
}

/**
 * Gatehousefile syntax of certificate issuers (`acme`, `internal`, `zerossl`), ACME preferred
 * chains, on-demand permission (`http`), certificate managers (`http`, `tailscale`), and the
 * implicit ACME issuers a site's `tls` shortcuts (`ca`, `dns`, `eab`, ...) create.
 *
 * @module
 */
import type { Dispenser } from "../caddyfile/dispenser.ts";
import type { Helper } from "../caddyfile/helper.ts";
import { type SyntaxSet, unmarshalModule } from "../caddyfile/registry.ts";
import { cloneJSON } from "../caddyfile/types.ts";
import { goAtoiStrict } from "../caddyfile/values.ts";
import { parseDuration } from "../config/duration.ts";

/** An issuer's JSON (`module` names it). */
export type IssuerJSON = Record<string, unknown> & { module: string };

/** Caddy's default issuers for a policy without any: ACME, plus ZeroSSL's ACME with an email. */
export function defaultIssuers(email: string): IssuerJSON[] {
  const out: IssuerJSON[] = [{ module: "acme" }];
  if (email.trim() !== "") {
    out.push({ module: "acme", ca: "https://acme.zerossl.com/v2/DV90", email });
  }
  return out;
}

type Obj = Record<string, unknown>;
const sub = (o: Obj, k: string): Obj => (o[k] ??= {}) as Obj;

/** `preferred_chains [smallest] { root_common_name ...; any_common_name ... }`. */
export function parsePreferredChains(d: Dispenser): Obj {
  const pref: Obj = {};
  if (d.nextArg()) {
    if (d.val() !== "smallest") throw d.err(`Invalid argument '${d.val()}'`);
    pref.smallest = true;
    if (d.nextArg()) throw d.argErr();
    if (d.nextBlock(d.nesting())) {
      throw d.err("No more options are accepted when using the 'smallest' option");
    }
  }
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    if (k !== "root_common_name" && k !== "any_common_name") {
      throw d.err(`Received unrecognized parameter '${k}'`);
    }
    const args = d.remainingArgs();
    pref[k] = [...((pref[k] as string[]) ?? []), ...args];
    if (args.length === 0) throw d.argErr();
    const other = k === "root_common_name" ? "any_common_name" : "root_common_name";
    if (pref[other] !== undefined) throw d.err(`Can't set ${k} when ${other} is already set`);
  }
  if (pref.smallest === undefined && !pref.root_common_name && !pref.any_common_name) {
    throw d.err("No options for preferred_chains received");
  }
  return pref;
}

function duration(d: Dispenser, what: string, s: string): number {
  return d.duration((text, reason) => `invalid ${what} duration ${text}: ${reason}`, s);
}

function port(d: Dispenser): number {
  try {
    return goAtoiStrict(d.val());
  } catch (e) {
    throw d.err(`invalid port ${d.val()}: ${(e as Error).message}`);
  }
}

function dnsOption(d: Dispenser, dns: () => Obj, name: string): boolean {
  switch (name) {
    case "propagation_delay":
    case "dns_ttl": {
      if (!d.nextArg()) throw d.argErr();
      const v = duration(d, name, d.val());
      dns()[name === "dns_ttl" ? "ttl" : name] = v;
      return true;
    }
    case "propagation_timeout": {
      if (!d.nextArg()) throw d.argErr();
      dns().propagation_timeout = d.val() === "-1" ? -1 : duration(d, name, d.val());
      return true;
    }
    case "resolvers": {
      const r = d.remainingArgs();
      dns().resolvers = r;
      if (r.length === 0) throw d.argErr();
      return true;
    }
  }
  return false;
}

function provider(d: Dispenser): Obj {
  const name = d.val();
  return { ...(unmarshalModule(d, `dns.providers.${name}`) as Obj), name };
}

const DNS_OPTIONS = ["propagation_delay", "dns_ttl", "propagation_timeout", "resolvers"];
const ACME_OPTIONS = [
  "lifetime",
  "dir",
  "test_dir",
  "email",
  "profile",
  "timeout",
  "disable_http_challenge",
  "disable_tlsalpn_challenge",
  "distributed",
  "alt_http_port",
  "alt_tlsalpn_port",
  "eab",
  "trusted_roots",
  "dns",
  "dns_challenge_override_domain",
  "preferred_chains",
];

function acmeIssuer(d: Dispenser): Obj {
  d.next();
  const iss: Obj = {};
  if (d.nextArg()) {
    iss.ca = d.val();
    if (d.nextArg()) throw d.argErr();
  }
  const ch = () => sub(iss, "challenges");
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    if (dnsOption(d, () => sub(ch(), "dns"), k)) continue;
    switch (k) {
      case "lifetime": {
        const a = d.allArgs(1);
        if (!a) throw d.argErr();
        const v = duration(d, "lifetime", a[0]);
        if (v < 0) throw d.err(`lifetime must be >= 0: ${a[0]}`);
        iss.certificate_lifetime = v;
        break;
      }
      case "dir": {
        if (iss.ca) throw d.err(`directory is already specified: ${iss.ca}`);
        const a = d.allArgs(1);
        if (!a) throw d.argErr();
        iss.ca = a[0];
        break;
      }
      case "test_dir":
      case "email":
      case "profile": {
        const a = d.allArgs(1);
        if (!a) throw d.argErr();
        iss[k === "test_dir" ? "test_ca" : k] = a[0];
        break;
      }
      case "timeout": {
        const a = d.allArgs(1);
        if (!a) throw d.argErr();
        iss.acme_timeout = duration(d, "timeout", a[0]);
        break;
      }
      case "disable_http_challenge":
        if (d.nextArg()) throw d.argErr();
        sub(ch(), "http").disabled = true;
        break;
      case "disable_tlsalpn_challenge":
        if (d.nextArg()) throw d.argErr();
        sub(ch(), "tls-alpn").disabled = true;
        break;
      case "distributed":
        if (!d.nextArg()) throw d.argErr();
        if (d.val() !== "false") throw d.err("only accepted value is 'false'");
        ch().distributed = false;
        break;
      case "alt_http_port":
      case "alt_tlsalpn_port":
        if (!d.nextArg()) throw d.argErr();
        sub(ch(), k === "alt_http_port" ? "http" : "tls-alpn").alternate_port = port(d);
        break;
      case "eab": {
        const a = d.allArgs(2);
        if (!a) throw d.argErr();
        iss.external_account = { key_id: a[0], mac_key: a[1] };
        break;
      }
      case "trusted_roots":
        iss.trusted_roots_pem_files = d.remainingArgs();
        break;
      case "dns": {
        const dns = sub(ch(), "dns");
        if (d.nextArg()) dns.provider = provider(d);
        break;
      }
      case "dns_challenge_override_domain": {
        const a = d.remainingArgs();
        if (a.length !== 1) throw d.argErr();
        sub(ch(), "dns").override_domain = a[0];
        break;
      }
      case "preferred_chains":
        iss.preferred_chains = parsePreferredChains(d);
        break;
      default:
        throw d.unknownSubdirective(
          [...DNS_OPTIONS, ...ACME_OPTIONS],
          "unrecognized ACME issuer property: %s",
        );
    }
  }
  return iss;
}

function internalIssuer(d: Dispenser): Obj {
  d.next();
  const iss: Obj = {};
  for (const n = d.nesting(); d.nextBlock(n);) {
    switch (d.val()) {
      case "ca": {
        const a = d.allArgs(1);
        if (!a) throw d.argErr();
        iss.ca = a[0];
        break;
      }
      case "lifetime":
        if (!d.nextArg()) throw d.argErr();
        iss.lifetime = parseDuration(d.val());
        break;
      case "sign_with_root":
        if (d.nextArg()) throw d.argErr();
        iss.sign_with_root = true;
        break;
      default:
        throw d.unknownSubdirective(
          ["ca", "lifetime", "sign_with_root"],
          "unrecognized subdirective '%s'",
        );
    }
  }
  return iss;
}

function zerosslIssuer(d: Dispenser): Obj {
  d.next();
  if (!d.nextArg()) throw d.argErr();
  const iss: Obj = { api_key: d.val() };
  if (d.nextArg()) throw d.argErr();
  const cname = () => sub(iss, "cname_validation");
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    if (dnsOption(d, cname, k)) continue;
    switch (k) {
      case "validity_days":
        if (iss.validity_days) {
          throw d.err(`validity days is already specified: ${iss.validity_days}`);
        }
        iss.validity_days = port(d);
        break;
      case "alt_http_port":
        if (!d.nextArg()) throw d.argErr();
        iss.alternate_http_port = port(d);
        break;
      case "dns":
        if (!d.nextArg()) throw d.argErr();
        cname().provider = provider(d);
        break;
      default:
        throw d.unknownSubdirective(
          [...DNS_OPTIONS, "validity_days", "alt_http_port", "dns"],
          "unrecognized zerossl issuer property: %s",
        );
    }
  }
  return iss;
}

function mergeInto(base: Obj, over: Obj): Obj {
  const out = cloneJSON(base);
  for (
    const k of [
      "ca",
      "test_ca",
      "email",
      "profile",
      "account_key",
      "acme_timeout",
      "certificate_lifetime",
    ]
  ) {
    if (over[k]) out[k] = over[k];
  }
  if (over.external_account) out.external_account = cloneJSON(over.external_account);
  const roots = over.trusted_roots_pem_files as string[] | undefined;
  if (roots?.length) {
    const merged = [...((out.trusted_roots_pem_files as string[]) ?? [])];
    for (const r of roots) if (!merged.includes(r)) merged.push(r);
    out.trusted_roots_pem_files = merged;
  }
  if (over.preferred_chains) out.preferred_chains = cloneJSON(over.preferred_chains);
  if (over.network_proxy) out.network_proxy = cloneJSON(over.network_proxy);
  const oc = over.challenges as Obj | undefined;
  if (oc) {
    const c = sub(out, "challenges");
    for (const kind of ["http", "tls-alpn"]) {
      const o = oc[kind] as Obj | undefined;
      if (!o) continue;
      const t = sub(c, kind);
      if (o.disabled) t.disabled = true;
      if (o.alternate_port) t.alternate_port = o.alternate_port;
    }
    const od = oc.dns as Obj | undefined;
    if (od) {
      const t = sub(c, "dns");
      for (
        const k of [
          "provider",
          "propagation_delay",
          "propagation_timeout",
          "override_domain",
          "ttl",
        ]
      ) {
        if (od[k]) t[k] = cloneJSON(od[k]);
      }
      if (od.resolvers !== undefined) t.resolvers = [...(od.resolvers as string[])];
    }
    if (oc.bind_host) c.bind_host = oc.bind_host;
    if (oc.distributed !== undefined) c.distributed = oc.distributed;
  }
  return out;
}

/**
 * The issuers a site's ACME shortcuts stand for: each ACME issuer of the global
 * `cert_issuer` option (or Caddy's defaults) with the site's settings on top.
 */
export function implicitACMEIssuers(h: Helper, overrides: IssuerJSON): IssuerJSON[] {
  const global = (h.option("cert_issuer") as IssuerJSON[] | undefined) ?? [];
  const fromGlobal = global.filter((i) => i.module === "acme").map((b) =>
    mergeInto(b, overrides) as IssuerJSON
  );
  if (fromGlobal.length > 0) return fromGlobal;
  const defaults = overrides.ca
    ? [{ module: "acme" }]
    : defaultIssuers((overrides.email as string) ?? "");
  return defaults.map((b) => mergeInto(b, overrides) as IssuerJSON);
}

/** The Gatehousefile syntax of the issuers, the permission module and the certificate managers. */
export const syntax: SyntaxSet = {
  modules: {
    "tls.issuance.acme": acmeIssuer,
    "tls.issuance.internal": internalIssuer,
    "tls.issuance.zerossl": zerosslIssuer,
    "tls.permission.http": (d) => {
      if (!d.next()) return {};
      const a = d.allArgs(1);
      if (!a) throw d.argErr();
      return { endpoint: a[0] };
    },
    "tls.get_certificate.tailscale": (d) => {
      d.next();
      if (d.nextArg()) throw d.argErr();
      return {};
    },
    "tls.get_certificate.http": (d) => {
      d.next();
      if (!d.nextArg()) throw d.argErr();
      const url = d.val();
      if (d.nextArg()) throw d.argErr();
      if (d.nextBlock(0)) throw d.err("block not allowed here");
      return { url };
    },
  },
};

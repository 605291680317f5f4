/**
 * Global options for certificates and the PKI app: `email`, `acme_ca`, `acme_ca_root`,
 * `acme_dns`, `acme_eab`, `cert_issuer`, `local_certs`, `key_type`, `on_demand_tls`,
 * `ocsp_stapling`, `preferred_chains`, `dns`, `tls_resolvers`, `ech`, `cert_lifetime`,
 * `renew_interval`, `ocsp_interval`, `renewal_window_ratio`, `default_sni`, `fallback_sni`,
 * `skip_install_trust`, `pki`.
 *
 * @module
 */
import { didYouMean, type Dispenser } from "../../caddyfile/dispenser.ts";
import { registerGlobalOption, unmarshalModule } from "../../caddyfile/registry.ts";
import { optDuration, optSingleString, optTrue } from "./options.ts";
import { type IssuerJSON, parsePreferredChains } from "../../tls/issuers_caddyfile.ts";
import { goParseFloat } from "../../config/go_values.ts";
import { parseDuration } from "../../config/duration.ts";

function optACMEEAB(d: Dispenser): Record<string, string> {
  d.next();
  if (d.nextArg()) throw d.argErr();
  const eab: Record<string, string> = {};
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    if (k !== "key_id" && k !== "mac_key") {
      throw d.err(`unrecognized parameter '${k}'${didYouMean(k, ["key_id", "mac_key"])}`);
    }
    if (!d.nextArg()) throw d.argErr();
    eab[k] = d.val();
  }
  return eab;
}

function optCertIssuer(d: Dispenser, existing: unknown): IssuerJSON[] {
  d.next();
  const issuers = [...((existing as IssuerJSON[] | undefined) ?? [])];
  if (!d.next()) throw d.argErr();
  const name = d.val();
  const iss = unmarshalModule(d, `tls.issuance.${name}`) as Record<string, unknown>;
  issuers.push({ ...iss, module: name });
  return issuers;
}

/** `dns <provider> ...` / `acme_dns [<provider> ...]`: a DNS provider's JSON (`name` set). */
function optDNS(d: Dispenser): Record<string, unknown> | null {
  d.next();
  const opt = d.val();
  if (!d.next()) {
    if (opt === "acme_dns") return null; // use the global `dns` provider
    throw d.argErr();
  }
  const name = d.val();
  const p = unmarshalModule(d, `dns.providers.${name}`) as Record<string, unknown>;
  return { ...p, name };
}

function optOnDemand(d: Dispenser): Record<string, unknown> {
  d.next();
  if (d.nextArg()) throw d.argErr();
  let ond: Record<string, unknown> | undefined;
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    switch (k) {
      case "ask":
      case "permission": {
        if (!d.nextArg()) throw d.argErr();
        ond ??= {};
        if (ond.permission !== undefined) {
          throw d.err("on-demand TLS permission module (or 'ask') already specified");
        }
        if (k === "ask") ond.permission = { endpoint: d.val(), module: "http" };
        else {
          const name = d.val();
          const p = unmarshalModule(d, `tls.permission.${name}`) as Record<string, unknown>;
          ond.permission = { ...p, module: name };
        }
        break;
      }
      case "interval":
      case "burst":
        throw d.err(
          `the on_demand_tls '${k}' option is no longer supported, remove it from your config`,
        );
      default:
        throw d.err(`unrecognized parameter '${k}'${didYouMean(k, ["ask", "permission"])}`);
    }
  }
  if (!ond) throw d.err("expected at least one config parameter for on_demand_tls");
  return ond;
}

function optOCSPStapling(d: Dispenser): { disableStapling: boolean } {
  d.next();
  const a = d.allArgs(1);
  if (!a) throw d.argErr();
  if (a[0] !== "off") throw d.err(`invalid argument '${a[0]}'`);
  return { disableStapling: true };
}

function optTLSResolvers(d: Dispenser): string[] {
  d.next();
  const r = d.remainingArgs();
  if (r.length === 0) throw d.argErr();
  return r;
}

function optECH(d: Dispenser): Record<string, unknown> {
  d.next();
  const names = d.remainingArgs();
  if (names.length === 0) throw d.argErr();
  const ech: Record<string, unknown> = { configs: names.map((n) => ({ public_name: n })) };
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "dns") throw d.err(`ech: unrecognized subdirective '${d.val()}'`);
    if (!d.next()) throw d.argErr();
    const name = d.val();
    const p = unmarshalModule(d, `dns.providers.${name}`) as Record<string, unknown>;
    const pubs = (ech.publication ??= []) as unknown[];
    pubs.push({ configs: names, publishers: { dns: { provider: { ...p, name } } } });
  }
  return ech;
}

function optRenewalWindowRatio(d: Dispenser): number {
  d.next();
  if (!d.next()) throw d.argErr();
  let ratio: number;
  try {
    ratio = goParseFloat(d.val());
  } catch (e) {
    throw d.err(`parsing renewal_window_ratio: ${(e as Error).message}`);
  }
  if (!(ratio > 0 && ratio < 1)) {
    throw d.err("renewal_window_ratio must be between 0 and 1 (exclusive)");
  }
  if (d.next()) throw d.argErr();
  return ratio;
}

/** A CA of the PKI app (JSON). */
export type CAJSON = Record<string, unknown>;

function keyPair(d: Dispenser, what: string): Record<string, string> {
  const kp: Record<string, string> = {};
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    const field = { cert: "certificate", key: "private_key", format: "format" }[k];
    if (!field) {
      throw d.unknownSubdirective(
        ["cert", "key", "format"],
        `unrecognized pki ca ${what} option '%s'`,
      );
    }
    if (!d.nextArg()) throw d.argErr();
    kp[field] = d.val();
  }
  return kp;
}

function optPKI(d: Dispenser): Map<string, CAJSON> {
  d.next();
  const cas = new Map<string, CAJSON>();
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "ca") throw d.unknownSubdirective(["ca"], "unrecognized pki option '%s'");
    const ca: CAJSON = {};
    let id = "";
    if (d.nextArg()) {
      id = d.val();
      if (d.nextArg()) throw d.argErr();
    }
    if (id === "") id = "local";
    for (const m = d.nesting(); d.nextBlock(m);) {
      const k = d.val();
      switch (k) {
        case "name":
        case "root_cn":
        case "intermediate_cn": {
          if (!d.nextArg()) throw d.argErr();
          const field = {
            name: "name",
            root_cn: "root_common_name",
            intermediate_cn: "intermediate_common_name",
          }[k];
          ca[field] = d.val();
          break;
        }
        case "intermediate_lifetime":
        case "maintenance_interval":
          if (!d.nextArg()) throw d.argErr();
          ca[k] = parseDuration(d.val());
          break;
        case "renewal_window_ratio": {
          if (!d.nextArg()) throw d.argErr();
          let r = NaN;
          try {
            r = goParseFloat(d.val());
          } catch { /* below */ }
          if (!(r > 0 && r <= 1)) {
            throw d.err(`renewal_window_ratio must be a number in (0, 1], got ${d.val()}`);
          }
          ca.renewal_window_ratio = r;
          break;
        }
        case "root":
        case "intermediate":
          ca[k] = { ...((ca[k] as object | undefined) ?? {}), ...keyPair(d, k) };
          break;
        default:
          throw d.unknownSubdirective(
            [
              "name",
              "root_cn",
              "intermediate_cn",
              "intermediate_lifetime",
              "maintenance_interval",
              "renewal_window_ratio",
              "root",
              "intermediate",
            ],
            "unrecognized pki ca option '%s'",
          );
      }
    }
    cas.set(id, ca);
  }
  return cas;
}

/** Registers the certificate and PKI global options. */
export function registerTLSOptions(): void {
  registerGlobalOption("default_sni", optSingleString);
  registerGlobalOption("fallback_sni", optSingleString);
  registerGlobalOption("renew_interval", optDuration);
  registerGlobalOption("ocsp_interval", optDuration);
  registerGlobalOption("acme_ca", optSingleString);
  registerGlobalOption("acme_ca_root", optSingleString);
  registerGlobalOption("acme_dns", optDNS);
  registerGlobalOption("acme_eab", optACMEEAB);
  registerGlobalOption("cert_issuer", optCertIssuer);
  registerGlobalOption("skip_install_trust", optTrue);
  registerGlobalOption("email", optSingleString);
  registerGlobalOption("on_demand_tls", optOnDemand);
  registerGlobalOption("local_certs", optTrue);
  registerGlobalOption("key_type", optSingleString);
  registerGlobalOption("ocsp_stapling", optOCSPStapling);
  registerGlobalOption("cert_lifetime", optDuration);
  registerGlobalOption("preferred_chains", (d) => {
    d.next();
    return parsePreferredChains(d);
  });
  registerGlobalOption("dns", optDNS);
  registerGlobalOption("tls_resolvers", optTLSResolvers);
  registerGlobalOption("ech", optECH);
  registerGlobalOption("renewal_window_ratio", optRenewalWindowRatio);
  registerGlobalOption("pki", optPKI);
}

/**
 * Gatehousefile syntax of the `tls` directive: a site's certificate source (files, folders,
 * `internal`, ACME with an email or options, explicit issuers) and its TLS connection
 * settings (protocols, ciphers, curves, ALPN, client authentication). Produces the config
 * values the adapter turns into the tls app's automation policies and the server's
 * connection policies.
 *
 * ```
 * tls [internal|force_automate|<email>] | [<cert_file> <key_file>] {
 *     protocols <min> [<max>]
 *     ciphers <cipher_suites...>
 *     curves <curves...>
 *     alpn <values...>
 *     load <paths...>
 *     ca <acme_directory>   ca_root <pem_file>   key_type <type>
 *     dns [<provider> ...]  propagation_delay|propagation_timeout|dns_ttl <duration>
 *     resolvers <servers...>  dns_challenge_override_domain <domain>  eab <key_id> <mac_key>
 *     on_demand   reuse_private_keys   force_automate   insecure_secrets_log <file>
 *     issuer <name> [...]   get_certificate <name> [...]   renewal_window_ratio <ratio>
 *     client_auth { ... }
 * }
 * ```
 *
 * @module
 */
import { didYouMean } from "../caddyfile/dispenser.ts";
import type { Helper } from "../caddyfile/helper.ts";
import { type SyntaxSet, unmarshalModule } from "../caddyfile/registry.ts";
import type { IssuerJSON } from "./issuers_caddyfile.ts";
import type { ConfigValue } from "../caddyfile/types.ts";
import { goParseFloat } from "../config/go_values.ts";
import { parseDuration } from "../config/duration.ts";
import { parseClientAuth, syntax as clientAuthSyntax } from "./client_auth_caddyfile.ts";
import { implicitACMEIssuers } from "./issuers_caddyfile.ts";

/** TLS versions a policy may name. */
export const SUPPORTED_PROTOCOLS: readonly string[] = ["tls1.2", "tls1.3"];

/** Cipher suite names (Go's `tls.CipherSuites()`). */
export const SUPPORTED_CIPHER_SUITES: readonly string[] = [
  "TLS_AES_128_GCM_SHA256",
  "TLS_AES_256_GCM_SHA384",
  "TLS_CHACHA20_POLY1305_SHA256",
  "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
  "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
  "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
  "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
  "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
  "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
  "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
  "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
];

/** Key exchange curves. */
export const SUPPORTED_CURVES: readonly string[] = [
  "x25519mlkem768",
  "x25519",
  "secp256r1",
  "secp384r1",
  "secp521r1",
];

const SUBDIRECTIVES = [
  "protocols",
  "ciphers",
  "curves",
  "client_auth",
  "alpn",
  "load",
  "ca",
  "key_type",
  "eab",
  "issuer",
  "get_certificate",
  "dns",
  "resolvers",
  "propagation_delay",
  "propagation_timeout",
  "dns_ttl",
  "dns_challenge_override_domain",
  "ca_root",
  "on_demand",
  "reuse_private_keys",
  "insecure_secrets_log",
  "renewal_window_ratio",
];

type Obj = Record<string, unknown>;

/** `tls`: see the module documentation. */
export function parseTLS(h: Helper): ConfigValue[] {
  h.next();
  const cp: Obj = {};
  const fileLoader: Obj[] = [];
  const folderLoader: string[] = [];
  const anyTag: string[] = [];
  let acme: IssuerJSON | undefined;
  let internal: IssuerJSON | undefined;
  let keyType = "";
  const issuers: IssuerJSON[] = [];
  const managers: Obj[] = [];
  let onDemand = false, reuseKeys = false, forceAutomate = false;
  let ratio = 0;
  const dnsOptionsSet: string[] = [];
  const acmeIssuer = () => (acme ??= { module: "acme" });
  const dnsConfig = () => {
    const ch = (acmeIssuer().challenges ??= {}) as Obj;
    return (ch.dns ??= {}) as Obj;
  };
  const oneArg = () => {
    const a = h.remainingArgs();
    if (a.length !== 1) throw h.argErr();
    return a[0];
  };

  const firstLine = h.remainingArgs();
  if (firstLine.length === 1) {
    if (firstLine[0] === "internal") internal = { module: "internal" };
    else if (firstLine[0] === "force_automate") forceAutomate = true;
    else if (!firstLine[0].includes("@")) {
      throw h.err(
        "single argument must either be 'internal', 'force_automate', or an email address",
      );
    } else acme = { module: "acme", email: firstLine[0] };
  } else if (firstLine.length === 2) {
    const [certFile, keyFile] = firstLine;
    // each certificate file is loaded once, with one tag that policies select it by
    const tags = (h.scope.state.tlsCertTags ??= new Map<string, string>()) as Map<string, string>;
    let tag = tags.get(certFile);
    if (tag === undefined) {
      tag = `cert${tags.size}`;
      fileLoader.push({ certificate: certFile, key: keyFile, tags: [tag] });
      tags.set(certFile, tag);
    }
    anyTag.push(tag);
  } else if (firstLine.length > 2) throw h.argErr();

  let hasBlock = false;
  for (const n = h.nesting(); h.nextBlock(n);) {
    hasBlock = true;
    const sub = h.val();
    switch (sub) {
      case "protocols": {
        const args = h.remainingArgs();
        if (args.length === 0) throw h.err("protocols requires one or two arguments");
        for (const [i, field] of [[0, "protocol_min"], [1, "protocol_max"]] as const) {
          if (args.length <= i) continue;
          if (!SUPPORTED_PROTOCOLS.includes(args[i])) {
            throw h.err(
              `wrong protocol name or protocol not supported: '${args[i]}'${
                didYouMean(args[i], SUPPORTED_PROTOCOLS)
              }`,
            );
          }
          cp[field] = args[i];
        }
        break;
      }
      case "ciphers":
        while (h.nextArg()) {
          if (!SUPPORTED_CIPHER_SUITES.includes(h.val())) {
            throw h.err(
              `wrong cipher suite name or cipher suite not supported: '${h.val()}'${
                didYouMean(h.val(), SUPPORTED_CIPHER_SUITES)
              }`,
            );
          }
          cp.cipher_suites = [...((cp.cipher_suites as string[]) ?? []), h.val()];
        }
        break;
      case "curves":
        while (h.nextArg()) {
          if (!SUPPORTED_CURVES.includes(h.val())) {
            throw h.err(
              `Wrong curve name or curve not supported: '${h.val()}'${
                didYouMean(h.val(), SUPPORTED_CURVES)
              }`,
            );
          }
          cp.curves = [...((cp.curves as string[]) ?? []), h.val()];
        }
        break;
      case "client_auth":
        cp.client_authentication = parseClientAuth(h.newFromNextSegment());
        break;
      case "alpn": {
        const a = h.remainingArgs();
        if (a.length === 0) throw h.argErr();
        cp.alpn = a;
        break;
      }
      case "load":
        folderLoader.push(...h.remainingArgs());
        break;
      case "ca":
        acmeIssuer().ca = oneArg();
        break;
      case "key_type":
        keyType = oneArg();
        break;
      case "eab": {
        const a = h.remainingArgs();
        if (a.length !== 2) throw h.argErr();
        acmeIssuer().external_account = { key_id: a[0], mac_key: a[1] };
        break;
      }
      case "issuer": {
        if (!h.nextArg()) throw h.argErr();
        const name = h.val();
        const iss = unmarshalModule(h, `tls.issuance.${name}`) as Obj;
        issuers.push({ ...iss, module: name });
        break;
      }
      case "get_certificate": {
        if (!h.nextArg()) throw h.argErr();
        const name = h.val();
        const m = unmarshalModule(h, `tls.get_certificate.${name}`) as Obj;
        managers.push({ ...m, via: name });
        break;
      }
      case "dns": {
        const dns = dnsConfig();
        if (h.nextArg()) {
          const name = h.val();
          const p = unmarshalModule(h, `dns.providers.${name}`) as Obj;
          dns.provider = { ...p, name };
        } else if (h.option("dns") == null) throw h.argErr();
        break;
      }
      case "resolvers": {
        const a = h.remainingArgs();
        if (a.length === 0) throw h.argErr();
        dnsOptionsSet.push("resolvers");
        dnsConfig().resolvers = a;
        break;
      }
      case "propagation_delay":
      case "propagation_timeout":
      case "dns_ttl": {
        const s = oneArg();
        let v: number;
        if (sub === "propagation_timeout" && s === "-1") v = -1;
        else {
          try {
            v = parseDuration(s);
          } catch (e) {
            throw h.err(`invalid ${sub} duration ${s}: ${(e as Error).message}`);
          }
        }
        dnsOptionsSet.push(sub);
        const dns = dnsConfig();
        const key = sub === "dns_ttl" ? "ttl" : sub;
        if (v !== 0) dns[key] = v;
        else delete dns[key];
        break;
      }
      case "dns_challenge_override_domain": {
        const a = oneArg();
        dnsOptionsSet.push(sub);
        dnsConfig().override_domain = a;
        break;
      }
      case "ca_root": {
        const a = oneArg();
        const iss = acmeIssuer();
        iss.trusted_roots_pem_files = [...((iss.trusted_roots_pem_files as string[]) ?? []), a];
        break;
      }
      case "on_demand":
        if (h.nextArg()) throw h.argErr();
        onDemand = true;
        break;
      case "reuse_private_keys":
        if (h.nextArg()) throw h.argErr();
        reuseKeys = true;
        break;
      case "insecure_secrets_log":
        if (!h.nextArg()) throw h.argErr();
        cp.insecure_secrets_log = h.val();
        break;
      case "renewal_window_ratio": {
        const a = oneArg();
        try {
          ratio = goParseFloat(a);
        } catch (e) {
          throw h.err(`parsing renewal_window_ratio: ${(e as Error).message}`);
        }
        if (!(ratio > 0 && ratio < 1)) {
          throw h.err("renewal_window_ratio must be between 0 and 1 (exclusive)");
        }
        break;
      }
      default:
        throw h.unknownSubdirective(SUBDIRECTIVES, "unknown subdirective: %s");
    }
  }

  const dns = (acme?.challenges as Obj | undefined)?.dns as Obj | undefined;
  if (dns && dnsOptionsSet.length > 0) {
    const provided = dns.provider !== undefined || h.option("dns") != null ||
      h.option("acme_dns") != null;
    if (!provided) {
      throw h.err(
        `setting DNS challenge options [${
          dnsOptionsSet.join(", ")
        }] requires a DNS provider (set with the 'dns' subdirective or 'acme_dns' global option)`,
      );
    }
  }
  if (firstLine.length === 0 && !hasBlock) throw h.argErr();

  const vals: ConfigValue[] = [];
  if (fileLoader.length > 0) {
    vals.push({ class: "tls.cert_loader", value: { name: "load_files", value: fileLoader } });
  }
  if (folderLoader.length > 0) {
    vals.push({ class: "tls.cert_loader", value: { name: "load_folders", value: folderLoader } });
  }
  if (issuers.length > 0 && (acme || internal)) {
    throw h.err(
      "cannot mix issuer subdirective (explicit issuers) with other issuer-specific subdirectives (implicit issuers)",
    );
  }
  if (acme && internal) throw h.err("cannot create both ACME and internal certificate issuers");
  if (issuers.length > 0) {
    for (const i of issuers) vals.push({ class: "tls.cert_issuer", value: i });
  } else if (acme) {
    for (const i of implicitACMEIssuers(h, acme)) vals.push({ class: "tls.cert_issuer", value: i });
  } else if (internal) vals.push({ class: "tls.cert_issuer", value: internal });
  if (keyType) vals.push({ class: "tls.key_type", value: keyType });
  if (onDemand) vals.push({ class: "tls.on_demand", value: true });
  for (const m of managers) vals.push({ class: "tls.cert_manager", value: m });
  if (reuseKeys) vals.push({ class: "tls.reuse_private_keys", value: true });
  if (ratio > 0) vals.push({ class: "tls.renewal_window_ratio", value: ratio });
  if (forceAutomate) vals.push({ class: "tls.force_automate", value: true });
  if (anyTag.length > 0) cp.certificate_selection = { any_tag: anyTag };
  // a connection policy is always added: using tls at all turns TLS on for the site
  vals.push({ class: "tls.connection_policy", value: cp });
  return vals;
}

/**
 * The Gatehousefile syntax of the `tls` app: the `tls` site directive, and the client
 * authentication modules its `client_auth` block reads.
 */
export const syntax: SyntaxSet = {
  directives: { tls: parseTLS },
  modules: clientAuthSyntax.modules,
};

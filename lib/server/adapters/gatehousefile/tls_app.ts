/**
 * The `tls` app as Caddy's adapter writes it: an automation policy per site (issuers, key
 * type, on-demand, ... from `tls` and global options), internal names split onto the internal
 * issuer, certificate loaders, names to automate, on-demand and storage options.
 *
 * @module
 */
import {
  type AutomationPolicy,
  consolidateAutomationPolicies,
  encodeAutomationPolicy,
  fillInGlobalACMEDefaults,
  hasAllPublicNames,
  hasGlobalACMEDefaults,
  isACME,
  isTailscale,
  newBaseAutomationPolicy,
  subjectQualifiesForPublicCert,
} from "./automation.ts";
import { defaultIssuers } from "../../tls/issuers_caddyfile.ts";
import {
  subjectQualifiesForCert,
  subjectQualifiesForPublicCert as publicCert,
} from "./certnames.ts";
import type { AdaptContext } from "../../caddyfile/helper.ts";
import {
  type BindValue,
  hostsFromKeys,
  hostsFromKeysNotHTTP,
  isAllHTTP,
  type Pairing,
  ports,
  type SiteBlock,
} from "./listeners.ts";
import type { Token } from "../../caddyfile/lexer.ts";
import { siteError, withContext } from "../../caddyfile/dispenser.ts";
import type { IssuerJSON } from "../../tls/issuers_caddyfile.ts";
import { listenersUseAnyPortOtherThan } from "./server_json.ts";
import { jsonEqual } from "../../caddyfile/types.ts";

/** The key token of a site block that names host `host` (the first key when none does). */
function keyOf(sb: SiteBlock, host: string): Token {
  const i = sb.parsedKeys.findIndex((a) => a.host === host);
  return sb.block.keys[i >= 0 ? i : 0];
}

/** Builds the tls app's JSON; undefined when it would be empty. */
export function buildTLSApp(
  pairings: Pairing[],
  ctx: AdaptContext,
): Record<string, unknown> | undefined {
  const options = ctx.options;
  const tls: Record<string, unknown> = {};
  const certificates: Record<string, unknown> = {};
  let policies: AutomationPolicy[] | undefined;
  const automation = () => (policies ??= []);
  const certLoaders: { name: string; value: unknown[] }[] = [];
  const { http: httpPort } = ports(options);
  const autoHTTPS = (options.get("auto_https") as string[] | undefined) ?? [];

  // hosts that share a block with a hostless key are not in route matchers, so automatic
  // HTTPS would not see them
  const sharedWithHostless = new Set<string>();
  if (!autoHTTPS.includes("off")) {
    for (const p of pairings) {
      for (const sb of p.blocks) {
        const hostless = sb.parsedKeys.find((a) => a.host === "");
        if (!hostless) continue;
        for (const o of sb.parsedKeys) {
          if (o.original === hostless.original) continue;
          if (o.host !== "" && o.scheme !== "http" && o.port !== httpPort) {
            sharedWithHostless.add(o.host);
          }
        }
      }
    }
  }

  // the site keys each subject comes from, for errors
  const subjectKeys = new Map<string, Token[]>();
  let catchAll = newBaseAutomationPolicy(options, false);
  if (catchAll) automation().push(catchAll);
  const forcedNames = new Set<string>();

  for (const p of pairings) {
    if (!listenersUseAnyPortOtherThan(p.listeners.map((l) => l.address), httpPort)) continue;
    for (const sb of p.blocks) {
      if (isAllHTTP(sb)) continue;
      let ap = newBaseAutomationPolicy(options, true)!;
      const hosts = hostsFromKeys(sb, false);
      if (hosts.length === 0 && catchAll) ap = catchAll;
      if (sb.pile.has("tls.on_demand")) ap.fields.on_demand = true;
      if (sb.pile.has("tls.force_automate")) { for (const h of hosts) forcedNames.add(h); }
      if (sb.pile.has("tls.reuse_private_keys")) ap.fields.reuse_private_keys = true;
      const keyType = sb.pile.get("tls.key_type");
      if (keyType) ap.fields.key_type = keyType[0].value;
      const ratio = sb.pile.get("tls.renewal_window_ratio");
      if (ratio) ap.fields.renewal_window_ratio = ratio[0].value;
      else if (options.has("renewal_window_ratio")) {
        ap.fields.renewal_window_ratio = options.get("renewal_window_ratio");
      }
      const issuerVals = sb.pile.get("tls.cert_issuer");
      if (issuerVals) {
        const issuers = issuerVals.map((v) => v.value as IssuerJSON);
        if (ap === catchAll && !jsonEqual(ap.issuers ?? null, issuers)) {
          throw siteError(
            issuerVals[0].token ?? sb.block.keys[0],
            `automation policy from site block is also default/catch-all policy because of key without hostname, and the two are in conflict: ${
              JSON.stringify(ap.issuers ?? [])
            } != ${JSON.stringify(issuers)}`,
          );
        }
        ap.issuers = issuers;
      }
      for (const v of sb.pile.get("tls.cert_manager") ?? []) {
        ap.fields.get_certificate = [...((ap.fields.get_certificate as unknown[]) ?? []), v.value];
      }
      for (const v of sb.pile.get("bind") ?? []) {
        for (const iss of ap.issuers ?? []) {
          if (!isACME(iss)) continue;
          const ch = (iss.challenges ??= {}) as Record<string, unknown>;
          if (!ch.bind_host) {
            const first = (v.value as BindValue).addresses[0];
            if (first) ch.bind_host = first;
          }
        }
      }
      if (hosts.length === 0 && !catchAll) catchAll = ap;

      const subjects = hostsFromKeysNotHTTP(sb, httpPort).sort();
      ap.subjects = subjects;
      for (const s of subjects) {
        const list = subjectKeys.get(s) ?? [];
        const key = keyOf(sb, s);
        if (!list.some((k) => k.file === key.file && k.line === key.line)) list.push(key);
        subjectKeys.set(s, list);
      }

      // public and internal names of one block go to different issuers by default
      let ap2: AutomationPolicy | undefined;
      if (!ap.issuers?.length) {
        const internal: string[] = [], external: string[] = [];
        for (const s of subjects) {
          if (isTailscale(s)) continue;
          if (!subjectQualifiesForCert(s)) {
            throw siteError(keyOf(sb, s), `subject does not qualify for certificate: '${s}'`);
          }
          if (subjectQualifiesForPublicCert(ap, s)) external.push(s);
          else internal.push(s);
        }
        if (external.length > 0 && internal.length > 0) {
          ap.subjects = external;
          ap2 = {
            ...ap,
            fields: { ...ap.fields },
            subjects: internal,
            issuersRaw: [{ module: "internal" }],
          };
        }
      }
      automation().push(ap);
      if (ap2) automation().push(ap2);

      for (const v of sb.pile.get("tls.cert_loader") ?? []) {
        certLoaders.push(v.value as { name: string; value: unknown[] });
      }
    }
  }

  // loaders of one kind (files, folders, ...) are combined into one list
  for (const l of certLoaders) {
    certificates[l.name] = [...((certificates[l.name] as unknown[]) ?? []), ...l.value];
  }

  const onDemand = options.get("on_demand_tls");
  const auto: Record<string, unknown> = {};
  if (onDemand) {
    automation();
    auto.on_demand = onDemand;
  }
  const dns = options.get("dns");
  if (dns != null) tls.dns = dns;
  const resolvers = options.get("tls_resolvers");
  if (resolvers != null) tls.resolvers = resolvers;
  const ech = options.get("ech") as Record<string, unknown> | undefined;
  if (ech) {
    tls.encrypted_client_hello = ech;
    const ap = newBaseAutomationPolicy(options, true)!;
    for (const c of ech.configs as { public_name?: string }[]) {
      if (c.public_name) ap.subjects = [...(ap.subjects ?? []), c.public_name];
    }
    automation().push(ap);
  }
  if (options.get("storage_check") === "off") tls.disable_storage_check = true;
  const sci = options.get("storage_clean_interval");
  if (sci === false) tls.disable_storage_clean = true;
  for (
    const [opt, key] of [
      ["storage_clean_interval", "storage_clean_interval"],
      ["renew_interval", "renew_interval"],
      ["ocsp_interval", "ocsp_interval"],
    ] as const
  ) {
    const v = options.get(opt);
    if (typeof v === "number") {
      automation();
      if (v !== 0) auto[key] = v;
    }
  }
  const ocsp = options.get("ocsp_stapling") as { disableStapling: boolean } | undefined;
  if (ocsp?.disableStapling) tls.disable_ocsp_stapling = true;

  // names to automate: hosts sharing a block with a hostless key, and forced names
  const automate: string[] = [];
  const internalAP: AutomationPolicy = { fields: {}, issuersRaw: [{ module: "internal" }] };
  if (!autoHTTPS.includes("off") && !autoHTTPS.includes("disable_certs")) {
    for (const h of sharedWithHostless) {
      automate.push(h);
      if (!publicCert(h)) internalAP.subjects = [...(internalAP.subjects ?? []), h];
    }
  }
  for (const n of forcedNames) if (!automate.includes(n)) automate.push(n);
  automate.sort();
  if (automate.length > 0) certificates.automate = automate;
  if (internalAP.subjects?.length) automation().push(internalAP);

  if (policies) {
    if (hasGlobalACMEDefaults(options, true)) {
      for (const ap of policies) {
        if (!ap.issuers?.length && hasAllPublicNames(ap)) {
          const email = (options.get("email") as string | undefined) ?? "";
          ap.issuers = options.get("acme_ca") != null
            ? [{ module: "acme" }]
            : defaultIssuers(email);
        }
      }
    }
    policies.forEach((ap, i) => {
      (ap.issuers ?? []).forEach((iss, j) => {
        try {
          fillInGlobalACMEDefaults(iss, options);
        } catch (e) {
          throw withContext(e, `filling in global issuer defaults for AP ${i}, issuer ${j}: `);
        }
      });
      if (ap.issuers?.length && ap.issuersRaw === undefined) {
        ap.issuersRaw = ap.issuers.map((iss) => ({ ...iss }));
      }
    });
    const merged = consolidateAutomationPolicies(policies) ?? [];
    const seen = new Set<string>();
    for (const ap of merged) {
      for (const s of ap.subjects ?? []) {
        if (seen.has(s)) {
          const message =
            `hostname appears in more than one automation policy, making certificate management ambiguous: ${s}`;
          // (the site that names the hostname again)
          const keys = subjectKeys.get(s) ?? [];
          const key = keys[1] ?? keys[0];
          throw key ? siteError(key, message) : new Error(message);
        }
        seen.add(s);
      }
    }
    if (merged.length > 0) auto.policies = merged.map(encodeAutomationPolicy);
  }
  if (Object.keys(auto).length > 0) tls.automation = auto;
  if (Object.keys(certificates).length > 0) tls.certificates = certificates;
  return Object.keys(tls).length > 0 ? tls : undefined;
}

/**
 * TLS automation policies as the adapter builds them: the base policy from global options,
 * global ACME defaults filled into issuers, and the consolidation that orders policies from
 * most to least specific and merges or drops redundant ones (Caddy's rules).
 *
 * @module
 */
import { hostOnly, matchWildcard, subjectIsInternal, subjectIsIP } from "./certnames.ts";
import { siteError, withContext } from "../../caddyfile/dispenser.ts";
import { goStableSort } from "../../caddyfile/gosort.ts";
import { optionTokens } from "../../caddyfile/helper.ts";
import type { BindValue } from "./listeners.ts";
import type { IssuerJSON } from "../../tls/issuers_caddyfile.ts";
import { cloneJSON, type ConfigValue, stableJSON } from "../../caddyfile/types.ts";

/** An automation policy while it is built; `issuers` become JSON `issuers` at the end. */
export interface AutomationPolicy {
  /** Subjects ("" entries never; undefined = catch-all, [] = none listed). */
  subjects?: string[];
  /** Issuer objects (shared with other policies, as Caddy's pointers are). */
  issuers?: IssuerJSON[];
  /** Encoded issuers (the JSON `issuers`). */
  issuersRaw?: unknown[];
  /** Other JSON fields (`key_type`, `on_demand`, `get_certificate`, ...). */
  fields: Record<string, unknown>;
}

/** An error located at the global option `name` (when it is written). */
function located(options: Map<string, unknown>, name: string, message: string): Error {
  const t = optionTokens(options).get(name);
  return t ? siteError(t, message) : new Error(message);
}

/** True for issuers that embed an ACME issuer. */
export function isACME(iss: IssuerJSON): boolean {
  return iss.module === "acme";
}

/** A policy's comparable form (Caddy compares the whole struct). */
function apKey(ap: AutomationPolicy): string {
  return stableJSON({
    s: ap.subjects === undefined ? null : ap.subjects,
    sn: ap.subjects === undefined,
    i: ap.issuers?.length ? ap.issuers : null,
    r: ap.issuersRaw?.length ? ap.issuersRaw : null,
    f: Object.fromEntries(Object.entries(ap.fields).filter(([, v]) => isSetValue(v))),
  });
}

/** Deep equality of two policies. */
export function apEqual(a: AutomationPolicy, b: AutomationPolicy): boolean {
  return a === b || apKey(a) === apKey(b);
}

/**
 * The base policy from global options (`cert_issuer`, `local_certs`, `key_type`,
 * `ocsp_stapling`, `renewal_window_ratio`, ACME defaults); undefined when no option applies
 * unless `always`.
 */
export function newBaseAutomationPolicy(
  options: Map<string, unknown>,
  always: boolean,
): AutomationPolicy | undefined {
  const hasIssuers = options.has("cert_issuer");
  const hasLocal = options.has("local_certs");
  const hasKeyType = options.has("key_type");
  const hasOCSP = options.has("ocsp_stapling");
  const hasRatio = options.has("renewal_window_ratio");
  const hasAutomation = hasIssuers || hasLocal || hasKeyType || hasOCSP || hasRatio;
  const hasACMEDefaults = hasGlobalACMEDefaults(options, false);
  if (!hasAutomation && !hasACMEDefaults) return always ? { fields: {} } : undefined;
  const ap: AutomationPolicy = { fields: {} };
  if (hasKeyType) ap.fields.key_type = options.get("key_type");
  if (hasIssuers && hasLocal) {
    const message =
      "global options are ambiguous: local_certs is confusing when combined with cert_issuer, because local_certs is also a specific kind of issuer";
    throw located(options, "local_certs", message);
  }
  if (hasIssuers) ap.issuers = options.get("cert_issuer") as IssuerJSON[];
  else if (hasLocal) ap.issuers = [{ module: "internal" }];
  if (hasACMEDefaults) {
    (ap.issuers ?? []).forEach((iss, i) => {
      try {
        fillInGlobalACMEDefaults(iss, options);
      } catch (e) {
        throw withContext(e, `filling in global issuer defaults for issuer ${i}: `);
      }
    });
  }
  if (hasOCSP) {
    if ((options.get("ocsp_stapling") as { disableStapling: boolean }).disableStapling) {
      ap.fields.disable_ocsp_stapling = true;
    }
  }
  if (hasRatio) ap.fields.renewal_window_ratio = options.get("renewal_window_ratio");
  return ap;
}

/** True when global options set ACME defaults (`email` counts only when `withEmail`). */
export function hasGlobalACMEDefaults(options: Map<string, unknown>, withEmail: boolean): boolean {
  return (withEmail && options.get("email") != null) || options.get("acme_ca") != null ||
    options.get("acme_ca_root") != null || options.has("acme_dns") ||
    options.get("acme_eab") != null || options.get("preferred_chains") != null;
}

type Obj = Record<string, unknown>;
const obj = (o: Obj, k: string): Obj => (o[k] ??= {}) as Obj;

/** Fills the global ACME options into an ACME issuer (in place); others are untouched. */
export function fillInGlobalACMEDefaults(iss: IssuerJSON, options: Map<string, unknown>): void {
  if (!isACME(iss)) return;
  const email = options.get("email") as string | undefined;
  const ca = options.get("acme_ca") as string | undefined;
  const caRoot = options.get("acme_ca_root") as string | undefined;
  const hasACMEDNS = options.has("acme_dns");
  const acmeDNS = options.get("acme_dns") as Obj | null | undefined;
  const eab = options.get("acme_eab");
  const chains = options.get("preferred_chains");
  const lifetime = options.get("cert_lifetime");
  const httpPort = options.get("http_port"), httpsPort = options.get("https_port");
  const defaultBind = options.get("default_bind") as ConfigValue[] | undefined;
  const ch = () => iss.challenges as Obj | undefined;

  if (email != null && !iss.email) iss.email = email;
  if (ca != null && !iss.ca) iss.ca = ca;
  if (caRoot != null) {
    const roots = (iss.trusted_roots_pem_files as string[] | undefined) ?? [];
    if (!roots.includes(caRoot)) iss.trusted_roots_pem_files = [...roots, caRoot];
  }
  if (hasACMEDNS && !(ch()?.dns as Obj | undefined)?.provider) {
    const globalDNS = options.get("dns");
    if (globalDNS == null && acmeDNS == null) {
      throw located(
        options,
        "acme_dns",
        "acme_dns specified without DNS provider config, but no provider specified with 'dns' global option",
      );
    }
    const dns = obj(obj(iss, "challenges"), "dns");
    if (acmeDNS != null && !dns.provider) dns.provider = cloneJSON(acmeDNS);
  }
  if (eab != null && !iss.external_account) iss.external_account = eab;
  if (chains != null && !iss.preferred_chains) iss.preferred_chains = chains;
  if (
    httpPort != null && !ch()?.dns &&
    !((ch()?.http as Obj | undefined)?.alternate_port)
  ) obj(obj(iss, "challenges"), "http").alternate_port = httpPort;
  if (
    httpsPort != null && !ch()?.dns &&
    !((ch()?.["tls-alpn"] as Obj | undefined)?.alternate_port)
  ) obj(obj(iss, "challenges"), "tls-alpn").alternate_port = httpsPort;
  if (!ch() || (!ch()!.dns && !ch()!.bind_host)) {
    const first = defaultBind?.[0]?.value as BindValue | undefined;
    if (first && first.addresses.length > 0) {
      const c = obj(iss, "challenges");
      if (first.addresses[0]) c.bind_host = first.addresses[0];
      else delete c.bind_host;
    }
  }
  if (lifetime != null && !iss.certificate_lifetime) iss.certificate_lifetime = lifetime;
  const resolvers = options.get("tls_resolvers") as string[] | undefined;
  const dns = ch()?.dns as Obj | undefined;
  if (resolvers && dns) {
    if ((hasACMEDNS || dns.provider) && !(dns.resolvers as string[] | undefined)?.length) {
      dns.resolvers = resolvers;
    }
  }
}

/** Like certmagic's rule, but `*.*.tld` qualifies with on-demand and IPs never do. */
export function subjectQualifiesForPublicCert(ap: AutomationPolicy, subj: string): boolean {
  return !subjectIsIP(subj) && !subjectIsInternal(subj) &&
    (subj.split("*.").length - 1 < 2 || ap.fields.on_demand === true);
}

/** True when every subject qualifies for a public cert and none is a Tailscale name. */
export function hasAllPublicNames(ap: AutomationPolicy): boolean {
  return !(ap.subjects ?? []).some((s) => !subjectQualifiesForPublicCert(ap, s) || isTailscale(s));
}

/** True for `*.ts.net` names. */
export function isTailscale(name: string): boolean {
  return name.toLowerCase().endsWith(".ts.net");
}

const SAME_FIELDS = [
  "get_certificate",
  "storage",
  "must_staple",
  "key_type",
  "on_demand",
  "reuse_private_keys",
  "renewal_window_ratio",
];

/** Derived facts of a policy, computed once per consolidation (subjects reset some). */
interface Facts {
  key?: string;
  issuers?: string;
  fields?: string;
  cls?: string;
  exact?: Set<string>;
  wild?: string[];
  subjectSet?: Set<string>;
}

/**
 * Sorts policies most specific first and merges or drops redundant ones (Caddy's
 * `consolidateAutomationPolicies`; derived facts are cached so that thousands of sites
 * consolidate quickly).
 */
export function consolidateAutomationPolicies(
  aps: AutomationPolicy[],
): AutomationPolicy[] | undefined {
  const facts = new Map<AutomationPolicy, Facts>();
  const f = (ap: AutomationPolicy): Facts => {
    let x = facts.get(ap);
    if (!x) facts.set(ap, x = {});
    return x;
  };
  const subjectsChanged = (ap: AutomationPolicy) => {
    const x = f(ap);
    x.key = x.cls = undefined;
    x.exact = x.wild = undefined;
  };
  const key = (ap: AutomationPolicy) => f(ap).key ??= apKey(ap);
  const issuersKey = (ap: AutomationPolicy) =>
    f(ap).issuers ??= stableJSON(ap.issuersRaw?.length ? ap.issuersRaw : null);
  const fieldsKey = (ap: AutomationPolicy) =>
    f(ap).fields ??= stableJSON(SAME_FIELDS.map((k) => norm(ap.fields[k])));
  const cls = (ap: AutomationPolicy) => f(ap).cls ??= implicitClass(ap);
  const isSubset = (a: AutomationPolicy, b: AutomationPolicy): boolean => {
    if (!b.subjects?.length) return true;
    if (!a.subjects?.length) return false;
    const fb = f(b);
    if (!fb.exact) {
      fb.exact = new Set(b.subjects.map((w) => w.toLowerCase()));
      fb.wild = b.subjects.filter((w) => w.includes("*"));
    }
    return a.subjects.every((s) =>
      fb.exact!.has(hostOnly(s).toLowerCase()) || fb.wild!.some((w) => matchWildcard(s, w))
    );
  };
  const shadows = (i: number): number => {
    for (let j = i + 1; j < aps.length; j++) if (isSubset(aps[i], aps[j])) return j;
    return -1;
  };
  const usesDefaultInternal = (ap: AutomationPolicy): boolean => {
    if (!ap.issuersRaw?.length && !ap.issuers?.length) return cls(ap) === "internal";
    return ap.issuersRaw?.length === 1 && !ap.issuers?.length &&
      issuersKey(ap) === '[{"module":"internal"}]';
  };
  const sameIssuers = (a: AutomationPolicy, b: AutomationPolicy): boolean => {
    if (issuersKey(a) === issuersKey(b)) {
      if (a.issuersRaw?.length || a.issuers?.length || b.issuersRaw?.length || b.issuers?.length) {
        return true;
      }
      const ac = cls(a), bc = cls(b);
      return ac === "catch-all" || bc === "catch-all" || ac === bc;
    }
    return usesDefaultInternal(a) && usesDefaultInternal(b);
  };

  goStableSort(aps, (a, b) => {
    if (isSubset(a, b)) return true;
    if (isSubset(b, a)) return false;
    return (a.subjects?.length ?? 0) > (b.subjects?.length ?? 0);
  });
  // a policy that sets nothing (besides subjects) is left to automatic HTTPS, unless it
  // keeps a later, less specific policy from applying to its subjects
  let emptyCount = 0;
  const origLen = aps.length;
  for (let i = 0; i < aps.length; i++) {
    if (!isEmpty(aps[i], false)) continue;
    emptyCount++;
    const sh = shadows(i);
    if (i === aps.length - 1 || (sh >= 0 && isEmpty(aps[sh], true))) {
      aps.splice(i, 1);
      i--;
    }
  }
  if (emptyCount === origLen) return undefined;

  outer: for (let i = 0; i < aps.length; i++) {
    for (let j = i + 1; j < aps.length; j++) {
      const sameLength = (aps[i].subjects?.length ?? -1) === (aps[j].subjects?.length ?? -1);
      if (aps[i] === aps[j] || (sameLength && key(aps[i]) === key(aps[j]))) {
        aps.splice(j, 1);
        i--;
        continue outer;
      }
      if (sameIssuers(aps[i], aps[j]) && fieldsKey(aps[i]) === fieldsKey(aps[j])) {
        if ((aps[i].subjects?.length ?? 0) > 0 && (aps[j].subjects?.length ?? 0) === 0) {
          if (shadows(i) >= j) {
            aps.splice(i, 1);
            i--;
            continue outer;
          }
        } else {
          const fi = f(aps[i]);
          const set = fi.subjectSet ??= new Set(aps[i].subjects ?? []);
          const added = (aps[j].subjects ?? []).filter((s) => !set.has(s));
          if (added.length > 0 || aps[i].subjects === undefined && aps[j].subjects !== undefined) {
            const subj = aps[i].subjects ?? [];
            for (const s of added) {
              set.add(s);
              subj.push(s);
            }
            if (aps[i].subjects !== undefined || subj.length > 0) aps[i].subjects = subj;
            subjectsChanged(aps[i]);
          }
          aps.splice(j, 1);
          j--;
        }
      }
    }
  }
  return aps;
}

function implicitClass(ap: AutomationPolicy): string {
  if (!ap.subjects?.length) return "catch-all";
  const pub = ap.subjects.some((s) => subjectQualifiesForPublicCert(ap, s));
  const internal = ap.subjects.some((s) => !subjectQualifiesForPublicCert(ap, s));
  return pub && internal ? "mixed" : pub ? "public" : "internal";
}

const norm = (v: unknown) => isSetValue(v) ? v : null;

/** True when a value is not Go's zero value. */
export function isSetValue(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === "") return false;
  if (Array.isArray(v)) return v.length > 0;
  return true;
}

/** True when a policy sets nothing but subjects (and `get_certificate`, when allowed). */
function isEmpty(ap: AutomationPolicy, allowManagers: boolean): boolean {
  return !ap.issuers?.length && !ap.issuersRaw?.length &&
    !Object.entries(ap.fields).some(([k, v]) =>
      !(allowManagers && k === "get_certificate") && isSetValue(v)
    );
}

/** The JSON of a policy. */
export function encodeAutomationPolicy(ap: AutomationPolicy): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (ap.subjects?.length) out.subjects = ap.subjects;
  if (ap.issuersRaw?.length) out.issuers = ap.issuersRaw;
  for (const [k, v] of Object.entries(ap.fields)) {
    if (v === undefined || v === false || v === 0 || v === "") continue;
    if (Array.isArray(v) && v.length === 0) continue;
    out[k] = v;
  }
  return out;
}

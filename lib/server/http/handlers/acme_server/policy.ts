/**
 * The issuance policy of `acme_server` (`policy`: `allow` and `deny` rule sets of `domains`
 * and `ip_ranges`, `allow_wildcard_names`), field by field as Caddy's `Policy` and `RuleSet`
 * (`modules/caddypki/acmeserver/policy.go`), its decoder, and the compiled policy with
 * smallstep's rules as Caddy uses them: a denied name is refused; when allow rules exist, a
 * name must match one; a domain rule `*.example.com` matches names one label below
 * `example.com`; wildcard names (`*.x`) are refused unless `allow_wildcard_names`.
 *
 * @module
 */
import type { Decoder } from "../../../config/decode.ts";
import { ConfigError } from "../../../config/error.ts";
import { ipInRanges, type IPRange, parseIP, parseRanges } from "../../../net/ip.ts";

/** The names a rule set covers. */
export type RuleSetConfig = {
  /** DNS names: exact, or `*.example.com` for the names one label below `example.com`. */
  domains?: string[];
  /** IP ranges in CIDR notation, or single addresses (matched exactly). */
  ip_ranges?: string[];
};

/** Which identifiers may be ordered. */
export type PolicyConfig = {
  /** When set, only the names it covers may be ordered. */
  allow?: RuleSetConfig;
  /** The names it covers may not be ordered. */
  deny?: RuleSetConfig;
  /** Wildcard names (`*.example.com`) may be ordered. */
  allow_wildcard_names?: boolean;
};

/** The fields of {@linkcode PolicyConfig}. */
export const POLICY_FIELDS: readonly (keyof PolicyConfig)[] = [
  "allow",
  "deny",
  "allow_wildcard_names",
];

const RULE_FIELDS: readonly (keyof RuleSetConfig)[] = ["domains", "ip_ranges"];

function ranges(list: string[], where: string): IPRange[] {
  try {
    return parseRanges(list);
  } catch (e) {
    throw new ConfigError("invalid_config", `${where}.ip_ranges: ${(e as Error).message}`);
  }
}

function decodeRuleSet(d: Decoder): RuleSetConfig {
  d.fields(RULE_FIELDS);
  const out: RuleSetConfig = {};
  const domains = d.strings("domains");
  if (domains) out.domains = domains;
  const ipRanges = d.strings("ip_ranges");
  ranges(ipRanges ?? [], d.path);
  if (ipRanges) out.ip_ranges = ipRanges;
  return out;
}

/**
 * Decodes and checks `policy` (known fields, the IP ranges).
 *
 * @example
 * ```ts
 * import { Decoder } from "../../../config/decode.ts";
 * import { decodePolicy } from "./policy.ts";
 * decodePolicy(Decoder.of({ allow: { domains: ["*.internal"] } }, "policy")).allow; // { domains: ["*.internal"] }
 * ```
 */
export function decodePolicy(d: Decoder): PolicyConfig {
  d.fields(POLICY_FIELDS);
  const out: PolicyConfig = {};
  const allow = d.object("allow");
  if (allow) out.allow = decodeRuleSet(allow);
  const deny = d.object("deny");
  if (deny) out.deny = decodeRuleSet(deny);
  const wildcards = d.bool("allow_wildcard_names");
  if (wildcards !== undefined) out.allow_wildcard_names = wildcards;
  return out;
}

interface RuleSet {
  domains: string[];
  ranges: IPRange[];
  any: boolean;
}

function ruleSet(config: RuleSetConfig | undefined): RuleSet {
  const domains = (config?.domains ?? []).map((d) => d.toLowerCase());
  const r = parseRanges(config?.ip_ranges ?? []);
  return { domains, ranges: r, any: domains.length > 0 || r.length > 0 };
}

function domainMatches(rule: string, name: string): boolean {
  if (rule === name) return true;
  if (rule.startsWith("*.")) {
    const dot = name.indexOf(".");
    return dot > 0 && name.slice(dot) === rule.slice(1) && !name.startsWith("*.");
  }
  return false;
}

function inSet(set: RuleSet, type: string, value: string): boolean {
  if (type === "ip") {
    const ip = parseIP(value);
    return ip !== null && ipInRanges(ip, set.ranges);
  }
  return set.domains.some((d) => domainMatches(d, value));
}

/** A compiled policy. */
export interface IssuancePolicy {
  /** Why an identifier may not be ordered, or null when it may. */
  refuse(type: string, value: string): string | null;
  /** True when no allow or deny rule is set (every name may be ordered). */
  readonly allowsAll: boolean;
}

/**
 * Compiles a decoded policy (every name allowed when `config` is undefined).
 *
 * @example
 * ```ts
 * import { compilePolicy } from "./policy.ts";
 * compilePolicy({ deny: { domains: ["bad.example"] } }).refuse("dns", "bad.example"); // "bad.example is denied by policy"
 * ```
 */
export function compilePolicy(config: PolicyConfig | undefined): IssuancePolicy {
  const allow = ruleSet(config?.allow);
  const deny = ruleSet(config?.deny);
  const wildcards = config?.allow_wildcard_names ?? false;
  return {
    allowsAll: !allow.any && !deny.any,
    refuse(type, value) {
      if (type === "dns" && value.startsWith("*.") && !wildcards) {
        return `wildcard name ${value} is not allowed`;
      }
      if (deny.any && inSet(deny, type, value)) return `${value} is denied by policy`;
      if (allow.any && !inSet(allow, type, value)) return `${value} is not allowed by policy`;
      return null;
    },
  };
}

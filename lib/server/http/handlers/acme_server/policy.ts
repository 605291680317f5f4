/**
 * The issuance policy of `acme_server` (`policy`: `allow` and `deny` rule sets of `domains`
 * and `ip_ranges`, `allow_wildcard_names`), with smallstep's rules as Caddy uses them: a
 * denied name is refused; when allow rules exist, a name must match one; a domain rule
 * `*.example.com` matches names one label below `example.com`; wildcard names (`*.x`) are
 * refused unless `allow_wildcard_names`.
 *
 * @module
 */
import { checkFields, optBool, optObject, optStrings, type Raw } from "../../config.ts";
import { ConfigError } from "../../../config/error.ts";
import { ipInRanges, type IPRange, parseIP, parseRanges } from "../../../net/ip.ts";

interface RuleSet {
  domains: string[];
  ranges: IPRange[];
  any: boolean;
}

/** A decoded policy. */
export interface IssuancePolicy {
  /** Why an identifier may not be ordered, or null when it may. */
  refuse(type: string, value: string): string | null;
  /** True when no allow or deny rule is set (every name may be ordered). */
  readonly allowsAll: boolean;
}

function ruleSet(raw: Raw | undefined, where: string): RuleSet {
  if (!raw) return { domains: [], ranges: [], any: false };
  checkFields(raw, ["domains", "ip_ranges"], where);
  const domains = (optStrings(raw, "domains", where) ?? []).map((d) => d.toLowerCase());
  let ranges: IPRange[];
  try {
    ranges = parseRanges(optStrings(raw, "ip_ranges", where) ?? []);
  } catch (e) {
    throw new ConfigError("invalid_config", `${where}.ip_ranges: ${(e as Error).message}`);
  }
  return { domains, ranges, any: domains.length > 0 || ranges.length > 0 };
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

/** Decodes `policy`. */
export function parsePolicy(raw: Raw | undefined, where: string): IssuancePolicy {
  if (raw) checkFields(raw, ["allow", "deny", "allow_wildcard_names"], where);
  const allow = ruleSet(raw ? optObject(raw, "allow", where) : undefined, `${where}.allow`);
  const deny = ruleSet(raw ? optObject(raw, "deny", where) : undefined, `${where}.deny`);
  const wildcards = raw ? optBool(raw, "allow_wildcard_names", where) ?? false : false;
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

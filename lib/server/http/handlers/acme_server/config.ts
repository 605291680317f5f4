/**
 * The `acme_server` handler's config (Caddy's `http.handlers.acme_server`): `ca` (the `pki`
 * app's CA id, default `local`), `lifetime` of issued certificates (default 12h, shorter than
 * the intermediate's), `host` (for the directory's URLs; default the request's host),
 * `path_prefix` (default `/acme/`), `sign_with_root`, `resolvers` (for dns-01 TXT lookups),
 * `challenges` (`http-01`, `dns-01`, `tls-alpn-01`; default all) and `policy`.
 *
 * @module
 */
import {
  checkFields,
  optBool,
  optDuration,
  optObject,
  optString,
  optStrings,
  type Raw,
} from "../../config.ts";
import { ConfigError } from "../../../config/error.ts";
import { type NameServer, parseNameServer } from "../reverse_proxy/upstream_sources/resolver.ts";
import { type IssuancePolicy, parsePolicy } from "./policy.ts";

/** A challenge type the server can validate. */
export type ChallengeType = "http-01" | "dns-01" | "tls-alpn-01";

const CHALLENGES: ChallengeType[] = ["http-01", "dns-01", "tls-alpn-01"];

/** The decoded handler config. */
export interface ACMEServerConfig {
  /** CA id in the `pki` app. */
  ca: string;
  /** Lifetime of issued certificates (ms). */
  lifetimeMs: number;
  /** Host for the directory's URLs; "" for the request's. */
  host: string;
  /** Path prefix with leading and trailing slash. */
  pathPrefix: string;
  /** Sign with the root instead of the intermediate. */
  signWithRoot: boolean;
  /** DNS servers for dns-01 (system's when empty). */
  resolvers: NameServer[];
  /** Enabled challenge types. */
  challenges: ChallengeType[];
  /** Which identifiers may be ordered. */
  policy: IssuancePolicy;
}

/**
 * Decodes the handler config; throws naming the field at fault.
 *
 * @example
 * ```ts
 * import { parseACMEServerConfig } from "./config.ts";
 * parseACMEServerConfig({ handler: "acme_server" }, "acme_server").pathPrefix; // "/acme/"
 * ```
 */
export function parseACMEServerConfig(raw: Raw, where: string): ACMEServerConfig {
  checkFields(raw, [
    "handler",
    "ca",
    "lifetime",
    "host",
    "path_prefix",
    "sign_with_root",
    "resolvers",
    "challenges",
    "policy",
  ], where);
  const lifetimeMs = optDuration(raw, "lifetime", where) || 12 * 3_600_000;
  if (lifetimeMs < 0) throw new ConfigError("invalid_config", `${where}.lifetime: negative`);
  let prefix = optString(raw, "path_prefix", where) || "/acme/";
  if (!prefix.startsWith("/")) prefix = "/" + prefix;
  if (!prefix.endsWith("/")) prefix += "/";
  const challenges = (optStrings(raw, "challenges", where) ?? []).map((c) => {
    const t = c.trim().toLowerCase() as ChallengeType;
    if (!CHALLENGES.includes(t)) {
      throw new ConfigError(
        "invalid_config",
        `${where}.challenges: acme challenge ${JSON.stringify(c)} is not supported (${
          CHALLENGES.join(", ")
        })`,
      );
    }
    return t;
  });
  return {
    ca: optString(raw, "ca", where) || "local",
    lifetimeMs,
    host: optString(raw, "host", where) ?? "",
    pathPrefix: prefix,
    signWithRoot: optBool(raw, "sign_with_root", where) ?? false,
    resolvers: (optStrings(raw, "resolvers", where) ?? []).map((a) =>
      parseNameServer(a, `${where}.resolvers`)
    ),
    challenges: challenges.length ? challenges : CHALLENGES,
    policy: parsePolicy(optObject(raw, "policy", where), `${where}.policy`),
  };
}

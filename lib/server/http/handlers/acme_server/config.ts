/**
 * The config of `http.handlers.acme_server`, field by field as Caddy's `Handler`
 * (`modules/caddypki/acmeserver/acmeserver.go`), its decoder, and the settings the handler
 * works with. The JSON decoder, the `acme_server` directive (`caddyfile.ts`) and the writer
 * (`writer.ts`) make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import { type NameServer, parseNameServer } from "../reverse_proxy/upstream_sources/resolver.ts";
import { compilePolicy, decodePolicy, type IssuancePolicy, type PolicyConfig } from "./policy.ts";

/** A challenge type the server can validate. */
export type ChallengeType = "http-01" | "dns-01" | "tls-alpn-01";

const CHALLENGES: ChallengeType[] = ["http-01", "dns-01", "tls-alpn-01"];

/** `http.handlers.acme_server`: the `pki` app's CA answering ACME (RFC 8555). */
export type ACMEServerConfig = {
  /** The module name. */
  handler: "acme_server";
  /** The id of the CA in the `pki` app that signs (`local` by default). */
  ca?: string;
  /**
   * The lifetime of issued certificates (nanoseconds or a duration string; 12h by default),
   * shorter than the signing certificate's.
   */
  lifetime?: number | string;
  /** The host the directory's URLs name; the request's host by default. */
  host?: string;
  /** The path prefix every ACME endpoint is under (`/acme/` by default). */
  path_prefix?: string;
  /** Sign with the CA's root instead of its intermediate (for clients that cannot chain). */
  sign_with_root?: boolean;
  /** DNS resolvers for the dns-01 TXT lookups (`host[:port]`; the system's by default). */
  resolvers?: string[];
  /** The challenges offered: `http-01`, `dns-01`, `tls-alpn-01` (all by default). */
  challenges?: string[];
  /** Which identifiers may be ordered (every one by default). */
  policy?: PolicyConfig;
};

/** The fields of {@linkcode ACMEServerConfig}. */
export const ACME_SERVER_FIELDS: readonly (keyof ACMEServerConfig)[] = [
  "handler",
  "ca",
  "lifetime",
  "host",
  "path_prefix",
  "sign_with_root",
  "resolvers",
  "challenges",
  "policy",
];

const WHERE = "http.handlers.acme_server";
const DEFAULT_LIFETIME_MS = 12 * 3_600_000;

function challengeType(c: string): ChallengeType | null {
  const t = c.trim().toLowerCase() as ChallengeType;
  return CHALLENGES.includes(t) ? t : null;
}

/**
 * Decodes and checks an `acme_server` config (types, known fields, the lifetime, the
 * challenges, the resolvers' addresses, the policy).
 *
 * @example
 * ```ts
 * import { decodeACMEServer } from "./config.ts";
 * decodeACMEServer({ handler: "acme_server", ca: "home" }).ca; // "home"
 * ```
 */
export function decodeACMEServer(raw: Raw): ACMEServerConfig {
  const d = new Decoder(raw, WHERE).fields(ACME_SERVER_FIELDS);
  const out: ACMEServerConfig = { handler: "acme_server" };
  const lifetime = d.duration("lifetime");
  if (lifetime !== undefined && lifetime < 0) d.failAt("lifetime", "negative");
  if (d.has("lifetime")) out.lifetime = d.value("lifetime") as number | string;
  const prefix = d.string("path_prefix");
  if (prefix !== undefined) out.path_prefix = prefix;
  const challenges = d.strings("challenges");
  for (const c of challenges ?? []) {
    if (!challengeType(c)) {
      d.failAt(
        "challenges",
        `acme challenge ${JSON.stringify(c)} is not supported (${CHALLENGES.join(", ")})`,
      );
    }
  }
  if (challenges) out.challenges = challenges;
  const ca = d.string("ca");
  if (ca !== undefined) out.ca = ca;
  const host = d.string("host");
  if (host !== undefined) out.host = host;
  const root = d.bool("sign_with_root");
  if (root !== undefined) out.sign_with_root = root;
  const resolvers = d.strings("resolvers");
  for (const r of resolvers ?? []) parseNameServer(r, d.at("resolvers"));
  if (resolvers) out.resolvers = resolvers;
  const policy = d.object("policy");
  if (policy) out.policy = decodePolicy(policy);
  return out;
}

/** The settings the handler works with, settled from a decoded config. */
export interface ACMEServerSettings {
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
 * The settings of a decoded config: defaults filled in, the prefix with its slashes, the
 * resolvers parsed, the policy compiled.
 *
 * @example
 * ```ts
 * import { acmeServerSettings } from "./config.ts";
 * acmeServerSettings({ handler: "acme_server" }).pathPrefix; // "/acme/"
 * ```
 */
export function acmeServerSettings(config: ACMEServerConfig): ACMEServerSettings {
  const lifetime = new Decoder(config, WHERE).duration("lifetime");
  let prefix = config.path_prefix || "/acme/";
  if (!prefix.startsWith("/")) prefix = "/" + prefix;
  if (!prefix.endsWith("/")) prefix += "/";
  const challenges = (config.challenges ?? []).map((c) => challengeType(c)!);
  return {
    ca: config.ca || "local",
    lifetimeMs: lifetime || DEFAULT_LIFETIME_MS,
    host: config.host ?? "",
    pathPrefix: prefix,
    signWithRoot: config.sign_with_root ?? false,
    resolvers: (config.resolvers ?? []).map((a) => parseNameServer(a, `${WHERE}.resolvers`)),
    challenges: challenges.length ? challenges : CHALLENGES,
    policy: compilePolicy(config.policy),
  };
}

/**
 * The ACME challenges this process is answering, and the answers themselves:
 *
 * - HTTP-01: `GET /.well-known/acme-challenge/<token>` for the challenge's host gets the key
 *   authorization as `text/plain`, on every HTTP and HTTPS server of the `http` app, before
 *   any route (as Caddy does), and on a standalone listener when no server of ours has the
 *   HTTP port.
 * - TLS-ALPN-01 is answered by its own listener (see `solvers.ts`), not through here.
 * - ZeroSSL's HTTP validation (`/.well-known/pki-validation/`, the `zerossl` issuer) goes the
 *   same way and is answered by `zerossl/validation.ts`.
 *
 * Challenges are also written to storage (`acme/<issuer>/challenge_tokens/<name>.json`, as
 * certmagic's distributed solver does), so that any Gatehouse instance sharing the storage
 * answers the CA, whichever instance started the order.
 *
 * @module
 */
import type { Logger } from "../../module/instance.ts";
import { loadText, safeKey, type Storage } from "../../module/storage.ts";
import { answerFileValidation, PKI_VALIDATION_PREFIX } from "../zerossl/validation.ts";

/** The path prefix of HTTP-01 requests. */
export const HTTP_CHALLENGE_PREFIX = "/.well-known/acme-challenge/";

/** One challenge being answered. */
export interface ActiveChallenge {
  /** Only `http-01` is answered through here (TLS-ALPN-01 has its own listener). */
  type: "http-01";
  /** The identifier (DNS name or IP) being validated, lower case. */
  name: string;
  /** The challenge token. */
  token: string;
  /** `token.thumbprint`. */
  keyAuthorization: string;
}

/** A storage shared with other instances, with the key prefix of one ACME issuer. */
export interface DistributedSource {
  /** The storage. */
  storage: Storage;
  /** `acme/<issuerKey>`. */
  prefix: string;
}

const byName = new Map<string, ActiveChallenge[]>();
const sources = new Map<string, DistributedSource>();
let logger: Logger | undefined;

/** Where "served key authentication" messages go (the `tls.issuance.acme` logger). */
export function setChallengeLogger(l: Logger): void {
  logger = l;
}

/** Storage key of a distributed challenge record. */
export function challengeTokenKey(prefix: string, name: string): string {
  return `${prefix}/challenge_tokens/${safeKey(name)}.json`;
}

/**
 * Starts answering a challenge in this process (and, with `shared`, in every instance using
 * that storage). Returns a function that stops answering it.
 *
 * @example
 * ```ts ignore
 * const done = await presentChallenge({ type: "http-01", name, token, keyAuthorization }, src);
 * try { ... } finally { await done(); }
 * ```
 */
export async function presentChallenge(
  challenge: ActiveChallenge,
  shared?: DistributedSource,
): Promise<() => Promise<void>> {
  const list = byName.get(challenge.name) ?? [];
  list.push(challenge);
  byName.set(challenge.name, list);
  const key = shared ? challengeTokenKey(shared.prefix, challenge.name) : undefined;
  if (shared && key) {
    const record = {
      type: challenge.type,
      token: challenge.token,
      keyAuthorization: challenge.keyAuthorization,
      identifier: { type: "dns", value: challenge.name },
    };
    await shared.storage.store(key, new TextEncoder().encode(JSON.stringify(record)));
  }
  let done = false;
  return async () => {
    if (done) return;
    done = true;
    const rest = (byName.get(challenge.name) ?? []).filter((c) => c !== challenge);
    if (rest.length) byName.set(challenge.name, rest);
    else byName.delete(challenge.name);
    if (shared && key) await shared.storage.delete(key).catch(() => {});
  };
}

/**
 * Adds a storage where other instances may have put challenges (one per ACME issuer of the
 * running config); returns a function that removes it.
 */
export function addDistributedSource(source: DistributedSource): () => void {
  const id = `${source.storage}|${source.prefix}`;
  sources.set(id, source);
  return () => {
    if (sources.get(id) === source) sources.delete(id);
  };
}

/** True while this process answers any challenge (cheap check for hot paths). */
export function hasActiveChallenges(): boolean {
  return byName.size > 0;
}

function hostOnly(host: string): string {
  if (host.startsWith("[")) return host.slice(1, host.indexOf("]")).toLowerCase();
  const colon = host.lastIndexOf(":");
  return (colon > 0 && host.indexOf(":") === colon ? host.slice(0, colon) : host).toLowerCase();
}

function answer(c: { keyAuthorization: string }): Response {
  return new Response(c.keyAuthorization, {
    headers: { "content-type": "text/plain", connection: "close" },
  });
}

/**
 * Answers an HTTP-01 request (or a ZeroSSL validation request) when it is one for a
 * challenge this process or an instance sharing its storage is answering; resolves undefined
 * for anything else (the request then goes to the routes). Only
 * `GET /.well-known/acme-challenge/<token>` with the challenge's host matches (a mismatched
 * host is not answered: DNS rebinding).
 *
 * @example
 * ```ts
 * import { answerHttpChallenge } from "./challenges.ts";
 * await answerHttpChallenge(new Request("http://example.com/")); // undefined
 * ```
 */
export async function answerHttpChallenge(
  request: Request,
  pathname: string = new URL(request.url).pathname,
  remote = "",
): Promise<Response | undefined> {
  if (pathname.startsWith(PKI_VALIDATION_PREFIX)) {
    return answerFileValidation(request, pathname, remote);
  }
  if (!pathname.startsWith(HTTP_CHALLENGE_PREFIX) || request.method !== "GET") return undefined;
  const token = pathname.slice(HTTP_CHALLENGE_PREFIX.length);
  if (!token || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
  const host = hostOnly(request.headers.get("host") ?? new URL(request.url).host);
  const local = byName.get(host)?.find((c) => c.type === "http-01" && c.token === token);
  if (local) {
    logger?.info("served key authentication", {
      identifier: host,
      challenge: "http-01",
      remote,
      distributed: false,
    });
    return answer(local);
  }
  for (const src of sources.values()) {
    let text: string | undefined;
    try {
      text = await loadText(src.storage, challengeTokenKey(src.prefix, host));
    } catch {
      continue; // storage unreachable: not ours to answer
    }
    if (!text) continue;
    try {
      const rec = JSON.parse(text) as { token?: unknown; keyAuthorization?: unknown };
      if (rec.token === token && typeof rec.keyAuthorization === "string") {
        logger?.info("served key authentication", {
          identifier: host,
          challenge: "http-01",
          remote,
          distributed: true,
        });
        return answer({ keyAuthorization: rec.keyAuthorization });
      }
    } catch { /* corrupt record: ignore */ }
  }
  return undefined;
}

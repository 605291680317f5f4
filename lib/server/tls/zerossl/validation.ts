/**
 * ZeroSSL's HTTP file validation (the API's `HTTP_CSR_HASH` method): ZeroSSL fetches
 * `http://<name>/.well-known/pki-validation/<hash>.txt` and expects the lines it gave when the
 * certificate was created. While a `zerossl` issuer validates a name, every server of the
 * `http` app answers that one path for that one host before its routes (as Caddy does), and so
 * does the standalone challenge listener when no server of ours has the HTTP port.
 *
 * Validations are also written to storage (`zerossl/challenge_tokens/<name>.json`, certmagic's
 * layout: `{"url", "token", "identifier"}`), so that any instance sharing the storage answers,
 * whichever one asked ZeroSSL.
 *
 * @module
 */
import type { Logger } from "../../module/instance.ts";
import { loadText, safeKey, type Storage } from "../../module/storage.ts";

/** The path prefix of ZeroSSL's HTTP validation requests. */
export const PKI_VALIDATION_PREFIX = "/.well-known/pki-validation/";
/** Where a `zerossl` issuer keeps shared validations (certmagic's issuer key). */
export const ZEROSSL_STORAGE_PREFIX = "zerossl";

/** One validation file being served. */
export interface FileValidation {
  /** The name being validated (lower case). */
  name: string;
  /** `file_validation_url_http`: only its path is answered. */
  url: string;
  /** The file's content (the API's lines joined with `\n`). */
  content: string;
}

const byName = new Map<string, FileValidation[]>();
/** Storages of running `zerossl` issuers, with how many issuers use each. */
const sources = new Map<Storage, number>();
let logger: Logger | undefined;

/** Where "served HTTP validation credential" messages go. */
export function setValidationLogger(l: Logger): void {
  logger = l;
}

/** Storage key of a shared validation record. */
export function validationKey(name: string): string {
  return `${ZEROSSL_STORAGE_PREFIX}/challenge_tokens/${safeKey(name)}.json`;
}

function pathOf(url: string): string | undefined {
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
}

/**
 * Starts serving a validation file in this process (and, with `shared`, from every instance
 * using that storage); resolves with a function that stops.
 *
 * @example
 * ```ts ignore
 * const stop = await presentFileValidation({ name, url, content }, storage);
 * try { ... } finally { await stop(); }
 * ```
 */
export async function presentFileValidation(
  v: FileValidation,
  shared?: Storage,
): Promise<() => Promise<void>> {
  if (!pathOf(v.url)?.startsWith(PKI_VALIDATION_PREFIX)) {
    throw new Error(
      `ZeroSSL gave a validation URL outside ${PKI_VALIDATION_PREFIX}: ${JSON.stringify(v.url)}`,
    );
  }
  const list = byName.get(v.name) ?? [];
  list.push(v);
  byName.set(v.name, list);
  const key = validationKey(v.name);
  if (shared) {
    const record = { url: v.url, token: v.content, identifier: { type: "dns", value: v.name } };
    await shared.store(key, new TextEncoder().encode(JSON.stringify(record)));
  }
  let done = false;
  return async () => {
    if (done) return;
    done = true;
    const rest = (byName.get(v.name) ?? []).filter((x) => x !== v);
    if (rest.length) byName.set(v.name, rest);
    else byName.delete(v.name);
    if (shared) await shared.delete(key).catch(() => {});
  };
}

/**
 * Adds a storage where other instances may have put validations (counted: a storage stays
 * while any issuer using it runs, also across a reload); returns its removal.
 */
export function addValidationSource(storage: Storage): () => void {
  sources.set(storage, (sources.get(storage) ?? 0) + 1);
  let dropped = false;
  return () => {
    if (dropped) return;
    dropped = true;
    const n = (sources.get(storage) ?? 1) - 1;
    if (n > 0) sources.set(storage, n);
    else sources.delete(storage);
  };
}

function hostOnly(host: string): string {
  if (host.startsWith("[")) return host.slice(1, host.indexOf("]")).toLowerCase();
  const colon = host.lastIndexOf(":");
  return (colon > 0 && host.indexOf(":") === colon ? host.slice(0, colon) : host).toLowerCase();
}

function answer(content: string, host: string, remote: string, distributed: boolean): Response {
  logger?.info("served HTTP validation credential", {
    identifier: host,
    remote,
    distributed,
  });
  return new Response(content, {
    headers: { "content-type": "text/plain", connection: "close" },
  });
}

/**
 * Answers a ZeroSSL validation request when one is being served for its host and exact path;
 * resolves undefined for anything else (the request then goes to the routes).
 *
 * @example
 * ```ts
 * import { answerFileValidation } from "./validation.ts";
 * await answerFileValidation(new Request("http://example.com/.well-known/pki-validation/A.txt"));
 * // undefined: nothing is being validated
 * ```
 */
export async function answerFileValidation(
  request: Request,
  pathname: string = new URL(request.url).pathname,
  remote = "",
): Promise<Response | undefined> {
  if (!pathname.startsWith(PKI_VALIDATION_PREFIX) || request.method !== "GET") return undefined;
  if (!byName.size && !sources.size) return undefined;
  let host: string;
  try {
    host = hostOnly(request.headers.get("host") ?? new URL(request.url).host);
  } catch {
    return undefined;
  }
  if (!host) return undefined;
  const local = byName.get(host)?.find((v) => pathOf(v.url) === pathname);
  if (local) return answer(local.content, host, remote, false);
  for (const storage of sources.keys()) {
    let text: string | undefined;
    try {
      text = await loadText(storage, validationKey(host));
    } catch {
      continue; // storage unreachable: not ours to answer
    }
    if (!text) continue;
    try {
      const rec = JSON.parse(text) as { url?: unknown; token?: unknown };
      if (
        typeof rec.url === "string" && typeof rec.token === "string" &&
        pathOf(rec.url) === pathname
      ) return answer(rec.token, host, remote, true);
    } catch { /* corrupt record: not answered */ }
  }
  return undefined;
}

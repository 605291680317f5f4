/**
 * The ACME protocol (RFC 8555) comes from npm `acme-client`, loaded the first time a config
 * uses an ACME issuer (servers without ACME never load it). This file loads it once and
 * configures what is process-wide in that library:
 *
 * - HTTPS trust per CA: `trusted_roots_pem_files` of an issuer apply to requests to its
 *   directory's origin only (a request interceptor picks the agent by origin); other CAs use
 *   the system roots.
 * - Per-origin request timeout (`acme_timeout`).
 * - Retries of one request on a network error, HTTP 429 or 5xx: 3 attempts, 2 s apart (the
 *   `Retry-After` header wins when the CA sends one). Whole-order retries with backoff belong
 *   to the certificate manager.
 * - The library's debug messages go to the `tls.issuance.acme.client` logger at DEBUG.
 *
 * @module
 */
import type * as AcmeClient from "acme-client";
import type { Logger } from "../../module/instance.ts";
import { x509 } from "../../pki/x509.ts";

/** The `acme-client` module. */
export type AcmeModule = typeof AcmeClient;

interface Origin {
  ca?: string[];
  timeoutMs?: number;
  agent?: unknown;
}

const origins = new Map<string, Origin>();
const lastNetworkError = new Map<string, string>();
let loaded: Promise<AcmeModule> | undefined;
let debugLogger: Logger | undefined;

/** Attempts of one ACME request on a network error, 429 or 5xx. */
export const REQUEST_ATTEMPTS = 3;
/** Seconds between those attempts when the CA sends no Retry-After. */
export const REQUEST_RETRY_DELAY_S = 2;

async function load(): Promise<AcmeModule> {
  // acme-client's own @peculiar/x509 wants the reflect-metadata API that x509() provides.
  await x509();
  const mod = await import("acme-client");
  const acme = ((mod as unknown as { default?: AcmeModule }).default ?? mod) as AcmeModule;
  const https = await import("node:https");
  const axios = acme.axios as unknown as {
    defaults: { acmeSettings: Record<string, number>; headers: { common: Record<string, string> } };
    interceptors: {
      request: { use(fn: (c: Record<string, unknown>) => unknown): void };
      response: unknown;
    };
  };
  axios.defaults.acmeSettings.retryMaxAttempts = REQUEST_ATTEMPTS - 1;
  axios.defaults.acmeSettings.retryDefaultDelay = REQUEST_RETRY_DELAY_S;
  axios.defaults.headers.common["User-Agent"] = "Gatehouse (acme-client)";
  // acme-client turns a request that got no answer at all into a TypeError; remember the
  // network error per origin so that `explainAcmeError` can say what happened.
  // (Placed first among the response interceptors, before acme-client's own.)
  (axios.interceptors.response as unknown as { handlers: unknown[] }).handlers.unshift({
    fulfilled: null,
    rejected: (e: { response?: unknown; message?: string; code?: string; config?: unknown }) => {
      if (!e?.response) {
        try {
          const url = (e?.config as { url?: unknown } | undefined)?.url;
          lastNetworkError.set(
            new URL(String(url)).origin,
            [e?.code, e?.message].filter(Boolean).join(": "),
          );
        } catch { /* odd URL */ }
      }
      return Promise.reject(e);
    },
    synchronous: false,
    runWhen: null,
  });
  axios.interceptors.request.use((config) => {
    let origin: Origin | undefined;
    try {
      origin = origins.get(new URL(String(config.url)).origin);
    } catch { /* relative or odd URL: defaults */ }
    if (origin?.ca) {
      origin.agent ??= new https.Agent({ ca: origin.ca, keepAlive: true });
      config.httpsAgent = origin.agent;
    }
    if (origin?.timeoutMs) config.timeout = origin.timeoutMs;
    return config;
  });
  acme.setLogger((msg: string) => debugLogger?.debug(msg));
  return acme;
}

/**
 * Loads `acme-client` (once per process).
 *
 * @example
 * ```ts ignore
 * const acme = await acmeModule();
 * const key = await acme.crypto.createPrivateEcdsaKey();
 * ```
 */
export function acmeModule(): Promise<AcmeModule> {
  loaded ??= load().catch((e) => {
    loaded = undefined;
    throw e;
  });
  return loaded;
}

/**
 * Sets the HTTPS trust and request timeout for one CA's origin (`https://host:port`). Roots
 * are PEM certificates; without roots the system's are used.
 *
 * @example
 * ```ts ignore
 * configureOrigin("https://127.0.0.1:14000", { roots: [pem], timeoutMs: 90_000 });
 * ```
 */
export function configureOrigin(
  origin: string,
  options: { roots?: string[]; timeoutMs?: number },
): void {
  const prev = origins.get(origin);
  // One PEM block per entry: Deno's node:https reads only the first block of a string.
  const blocks = (options.roots ?? []).flatMap((pem) =>
    pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []
  );
  const ca = blocks.length ? [...new Set([...(prev?.ca ?? []), ...blocks])] : prev?.ca;
  const same = prev && prev.ca?.join() === ca?.join();
  origins.set(origin, {
    ca,
    timeoutMs: options.timeoutMs ?? prev?.timeoutMs,
    agent: same ? prev.agent : undefined,
  });
}

/** Sends the library's own debug messages to `logger`. */
export function setAcmeDebugLogger(logger: Logger): void {
  debugLogger = logger;
}

/**
 * A clearer error for a failure of `acme-client`: a request that got no answer (refused, TLS
 * not trusted, timeout) surfaces there as a TypeError about `config`; this names the CA and the
 * network error instead. Other errors pass through.
 *
 * @example
 * ```ts ignore
 * try { await client.createOrder(...) } catch (e) { throw explainAcmeError(e, directoryUrl); }
 * ```
 */
export function explainAcmeError(e: unknown, directoryUrl: string): unknown {
  if (!(e instanceof TypeError) || !/reading 'config'/.test(e.message)) return e;
  let origin = directoryUrl;
  try {
    origin = new URL(directoryUrl).origin;
  } catch { /* keep the text */ }
  const cause = lastNetworkError.get(origin) ?? "no answer";
  return new Error(
    `the ACME CA at ${origin} did not answer (${cause}); check the ca URL, the network and, ` +
      `for a private CA, trusted_roots_pem_files`,
  );
}

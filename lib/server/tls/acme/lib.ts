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
import type { Logger } from "../../module.ts";
import { x509 } from "../../pki/x509.ts";

/** The `acme-client` module. */
export type AcmeModule = typeof AcmeClient;

interface Origin {
  ca?: string[];
  timeoutMs?: number;
  agent?: unknown;
}

const origins = new Map<string, Origin>();
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
    interceptors: { request: { use(fn: (c: Record<string, unknown>) => unknown): void } };
  };
  axios.defaults.acmeSettings.retryMaxAttempts = REQUEST_ATTEMPTS - 1;
  axios.defaults.acmeSettings.retryDefaultDelay = REQUEST_RETRY_DELAY_S;
  axios.defaults.headers.common["User-Agent"] = "Gatehouse (acme-client)";
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
  const ca = options.roots?.length
    ? [...new Set([...(prev?.ca ?? []), ...options.roots])]
    : prev?.ca;
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

/**
 * A client of ZeroSSL's REST API (`https://api.zerossl.com`, the endpoints and shapes of
 * ZeroSSL's documentation and of `github.com/caddyserver/zerossl`): certificates (create,
 * verify, poll, download, cancel, revoke) and External Account Binding credentials for
 * ZeroSSL's ACME endpoint (with the API key, or from an e-mail address without one).
 *
 * - The access key travels as the `access_key` query parameter, as the API wants; it never
 *   appears in an error message or a log line (requests are named by method and path only).
 * - The API often answers errors with HTTP 200: a body with `"success": false` or an `error`
 *   object is an error whatever the status ({@link ZeroSslApiError}, with ZeroSSL's code and
 *   type, and what to do for the usual ones).
 * - Limits: a response body over 2 MiB is refused; one request gets 2 minutes. A request that
 *   got no answer, HTTP 429 or a 5xx is tried 3 times, 2 s apart; longer retries (with backoff)
 *   belong to the certificate manager.
 *
 * @module
 */
import { parseApiResponse, ZeroSslApiError } from "./response.ts";
import { sleep } from "../../module/storage.ts";

export { ZeroSslApiError };

/** ZeroSSL's API (the default `api_url`). */
export const ZEROSSL_API = "https://api.zerossl.com";
/** ZeroSSL's production ACME directory (certmagic's `ZeroSSLProductionCA`). */
export const ZEROSSL_ACME_DIRECTORY = "https://acme.zerossl.com/v2/DV90";
/** Attempts of one request on no answer, 429 or 5xx. */
export const API_REQUEST_ATTEMPTS = 3;
/** Time between those attempts. */
export const API_RETRY_DELAY_MS = 2_000;
/** Time limit of one request. */
export const API_TIMEOUT_MS = 120_000;
/** Largest response body read. */
export const API_MAX_BODY = 2 * 1024 * 1024;

/** How ZeroSSL is asked to check control of a name (the API's `validation_method`). */
export type VerificationMethod = "HTTP_CSR_HASH" | "CNAME_CSR_HASH";

/** The validation details of one identifier (`validation.other_methods[<name>]`). */
export interface ValidationObject {
  /** `http://<name>/.well-known/pki-validation/<hash>.txt`. */
  file_validation_url_http: string;
  /** The same over HTTPS. */
  file_validation_url_https?: string;
  /** The lines the validation file must hold. */
  file_validation_content: string[];
  /** The CNAME record's name (`_<hash>.<name>`). */
  cname_validation_p1: string;
  /** The CNAME record's target. */
  cname_validation_p2: string;
}

/** A certificate as the API describes it (the fields used here). */
export interface CertificateObject {
  /** The certificate's id ("hash"). */
  id: string;
  /** `draft`, `pending_validation`, `issued`, `cancelled`, `revoked`, `expired`. */
  status: string;
  /** The first name. */
  common_name?: string;
  /** The other names, comma separated. */
  additional_domains?: string;
  /** Expiry (`YYYY-MM-DD hh:mm:ss`). */
  expires?: string;
  /** What to publish to prove control of each name. */
  validation?: { other_methods?: Record<string, ValidationObject> };
}

/** The issued certificate and its CA bundle (PEM). */
export interface CertificateBundle {
  /** The leaf. */
  certificate: string;
  /** The intermediates. */
  caBundle: string;
}

/** External Account Binding credentials for ZeroSSL's ACME endpoint. */
export interface EabCredentials {
  /** `eab_kid`. */
  keyId: string;
  /** `eab_hmac_key` (base64url). */
  macKey: string;
}

/** Revocation reasons the API takes, by RFC 5280 code. */
export const REVOCATION_REASONS: Record<number, string> = {
  0: "unspecified",
  1: "keyCompromise",
  3: "affiliationChanged",
  4: "Superseded",
  5: "cessationOfOperation",
};

/** Options of a client. */
export interface ZeroSslApiOptions {
  /** The API's base URL (default {@link ZEROSSL_API}). */
  baseUrl?: string;
  /** The access key (API key); absent for the e-mail EAB endpoint only. */
  accessKey?: string;
  /** Time between retried attempts (tests shorten it). */
  retryDelayMs?: number;
}

async function readLimited(res: Response): Promise<Uint8Array> {
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > API_MAX_BODY) {
    await res.body?.cancel();
    throw new Error(`response of ${declared} bytes is over the ${API_MAX_BODY}-byte limit`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? new ReadableStream<Uint8Array>()) {
    size += chunk.length;
    if (size > API_MAX_BODY) throw new Error(`response is over the ${API_MAX_BODY}-byte limit`);
    chunks.push(chunk);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * A client of one ZeroSSL API base URL with one access key.
 *
 * @example
 * ```ts ignore
 * const api = new ZeroSslApi({ accessKey: "…" });
 * const cert = await api.createCertificate(csrPem, ["example.com"]);
 * ```
 */
export class ZeroSslApi {
  /** The base URL, without a trailing slash. */
  readonly baseUrl: string;
  readonly #accessKey?: string;
  readonly #retryDelayMs: number;

  constructor(options: ZeroSslApiOptions = {}) {
    this.baseUrl = (options.baseUrl ?? ZEROSSL_API).replace(/\/+$/, "");
    this.#accessKey = options.accessKey;
    this.#retryDelayMs = options.retryDelayMs ?? API_RETRY_DELAY_MS;
  }

  /**
   * One request; resolves with the decoded JSON body of a success, throws a
   * {@link ZeroSslApiError} for an error payload and an `Error` naming the API and the
   * network error when nothing answered.
   */
  async request(
    method: "GET" | "POST",
    path: string,
    init: { json?: unknown; form?: Record<string, string>; query?: Record<string, string> } = {},
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [k, v] of Object.entries(init.query ?? {})) url.searchParams.set(k, v);
    if (this.#accessKey !== undefined) url.searchParams.set("access_key", this.#accessKey);
    const what = `${method} ${path}`;
    const headers: Record<string, string> = { "user-agent": "Gatehouse" };
    let body: string | undefined;
    if (init.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(init.json);
    } else if (init.form) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      body = new URLSearchParams(init.form).toString();
    }
    for (let attempt = 1;; attempt++) {
      const timeout = AbortSignal.timeout(API_TIMEOUT_MS);
      let res: Response;
      try {
        res = await fetch(url, {
          method,
          headers,
          body,
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (e) {
        signal?.throwIfAborted();
        const cause = timeout.aborted
          ? `no answer within ${API_TIMEOUT_MS / 1000} s`
          : (e as Error).message;
        if (attempt < API_REQUEST_ATTEMPTS) {
          await sleep(this.#retryDelayMs, signal);
          continue;
        }
        throw new Error(
          `the ZeroSSL API at ${url.origin} did not answer ${what} (${cause}); ` +
            `check api_url and the network`,
        );
      }
      const retryable = res.status === 429 || res.status >= 500;
      if (retryable && attempt < API_REQUEST_ATTEMPTS) {
        await res.body?.cancel();
        const after = Number(res.headers.get("retry-after"));
        await sleep(after > 0 && after <= 60 ? after * 1000 : this.#retryDelayMs, signal);
        continue;
      }
      let bytes: Uint8Array;
      try {
        bytes = await readLimited(res);
      } catch (e) {
        throw new Error(`the ZeroSSL API: ${what}: ${(e as Error).message}`);
      }
      return parseApiResponse(bytes, res.status, what);
    }
  }

  /**
   * Creates a certificate (status `draft`) for `names` from a PEM CSR; `validityDays` 0 means
   * the API's default (90).
   */
  async createCertificate(
    csrPem: string,
    names: string[],
    validityDays = 0,
    signal?: AbortSignal,
  ): Promise<CertificateObject> {
    const json: Record<string, unknown> = {
      certificate_domains: names.join(","),
      certificate_csr: csrPem,
      strict_domains: 1,
    };
    if (validityDays) json.certificate_validity_days = validityDays;
    return certificateObject(
      await this.request("POST", "/certificates", { json }, signal),
      "POST /certificates",
    );
  }

  /** Asks ZeroSSL to check the names now, by `method`. */
  async verifyIdentifiers(
    id: string,
    method: VerificationMethod,
    signal?: AbortSignal,
  ): Promise<CertificateObject> {
    const path = `/certificates/${encodeURIComponent(id)}/challenges`;
    return certificateObject(
      await this.request("POST", path, { json: { validation_method: method } }, signal),
      `POST ${path}`,
    );
  }

  /** The certificate's current state. */
  async getCertificate(id: string, signal?: AbortSignal): Promise<CertificateObject> {
    const path = `/certificates/${encodeURIComponent(id)}`;
    return certificateObject(await this.request("GET", path, {}, signal), `GET ${path}`);
  }

  /** The issued certificate and CA bundle. */
  async downloadCertificate(id: string, signal?: AbortSignal): Promise<CertificateBundle> {
    const path = `/certificates/${encodeURIComponent(id)}/download/return`;
    const body = await this.request("GET", path, {}, signal);
    const certificate = body["certificate.crt"];
    const caBundle = body["ca_bundle.crt"];
    if (typeof certificate !== "string" || !certificate.includes("-----BEGIN CERTIFICATE-----")) {
      throw new Error(`the ZeroSSL API: GET ${path}: no certificate.crt PEM in the answer`);
    }
    return { certificate, caBundle: typeof caBundle === "string" ? caBundle : "" };
  }

  /** Cancels a certificate not issued yet. */
  async cancelCertificate(id: string, signal?: AbortSignal): Promise<void> {
    await this.request("POST", `/certificates/${encodeURIComponent(id)}/cancel`, {}, signal);
  }

  /** Revokes an issued certificate (RFC 5280 reason 0, 1, 3, 4 or 5). */
  async revokeCertificate(id: string, reason: number, signal?: AbortSignal): Promise<void> {
    const r = REVOCATION_REASONS[reason];
    if (!r) throw new Error(`revocation reason must be 0, 1, 3, 4 or 5, got ${reason}`);
    await this.request(
      "GET",
      `/certificates/${encodeURIComponent(id)}/revoke`,
      { query: { reason: r } },
      signal,
    );
  }

  /** EAB credentials of the account the access key belongs to. */
  async eabCredentials(signal?: AbortSignal): Promise<EabCredentials> {
    return eab(await this.request("POST", "/acme/eab-credentials", {}, signal));
  }

  /** EAB credentials for an e-mail address (no access key; the account is made by ZeroSSL). */
  async eabCredentialsForEmail(email: string, signal?: AbortSignal): Promise<EabCredentials> {
    return eab(
      await this.request("POST", "/acme/eab-credentials-email", { form: { email } }, signal),
    );
  }
}

function eab(body: Record<string, unknown>): EabCredentials {
  const keyId = body.eab_kid;
  const macKey = body.eab_hmac_key;
  if (typeof keyId !== "string" || !keyId || typeof macKey !== "string" || !macKey) {
    throw new Error("the ZeroSSL API answered without eab_kid and eab_hmac_key");
  }
  return { keyId, macKey };
}

function certificateObject(body: Record<string, unknown>, what: string): CertificateObject {
  if (typeof body.id !== "string" || !body.id || typeof body.status !== "string") {
    throw new Error(`the ZeroSSL API: ${what}: the answer is not a certificate (no id or status)`);
  }
  return body as unknown as CertificateObject;
}

/**
 * External Account Binding credentials for ZeroSSL's ACME endpoint, from ZeroSSL's API: with
 * an API key (`POST /acme/eab-credentials`) or for an e-mail address
 * (`POST /acme/eab-credentials-email`). They are asked for only when a new ACME account is
 * registered (the account, kept in storage, is reused afterwards), and logged by key id only.
 *
 * @module
 */
import type { Logger } from "../../module/instance.ts";
import { type EabCredentials, ZEROSSL_API, ZeroSslApi } from "./api.ts";

/**
 * True for a directory of ZeroSSL's ACME endpoint (`https://acme.zerossl.com/...`), which
 * requires External Account Binding.
 *
 * @example
 * ```ts
 * import { isZeroSslDirectory } from "./eab.ts";
 * isZeroSslDirectory("https://acme.zerossl.com/v2/DV90"); // true
 * ```
 */
export function isZeroSslDirectory(url: string): boolean {
  return url.startsWith("https://acme.zerossl.com/");
}

function logged(
  get: () => Promise<EabCredentials>,
  logger: Logger,
  how: string,
): () => Promise<EabCredentials> {
  return async () => {
    let eab: EabCredentials;
    try {
      eab = await get();
    } catch (e) {
      throw new Error(`getting EAB credentials from ZeroSSL ${how}: ${(e as Error).message}`);
    }
    logger.info("generated EAB credentials", { key_id: eab.keyId });
    return eab;
  };
}

/**
 * A source of EAB credentials for `email` (ZeroSSL makes or finds the account of that
 * address).
 *
 * @example
 * ```ts ignore
 * const eab = await zerosslEabForEmail("ops@example.com", logger)();
 * ```
 */
export function zerosslEabForEmail(
  email: string,
  logger: Logger,
  apiUrl: string = ZEROSSL_API,
): () => Promise<EabCredentials> {
  const api = new ZeroSslApi({ baseUrl: apiUrl });
  return logged(() => api.eabCredentialsForEmail(email), logger, `for ${email}`);
}

/**
 * A source of EAB credentials of the ZeroSSL account an API key belongs to.
 *
 * @example
 * ```ts ignore
 * const eab = await zerosslEabForApiKey(apiKey, logger)();
 * ```
 */
export function zerosslEabForApiKey(
  apiKey: string,
  logger: Logger,
  apiUrl: string = ZEROSSL_API,
): () => Promise<EabCredentials> {
  const api = new ZeroSslApi({ baseUrl: apiUrl, accessKey: apiKey });
  return logged(() => api.eabCredentials(), logger, "with the API key");
}

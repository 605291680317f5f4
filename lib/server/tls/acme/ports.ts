/**
 * The ports ACME challenges are answered on by default: the running `http` app's `http_port`
 * (HTTP-01) and `https_port` (TLS-ALPN-01), 80 and 443 when no `http` app runs. The `http`
 * app reports its ports when it starts; an issuer's `alternate_port` overrides them.
 *
 * @module
 */

let current = { http: 80, https: 443 };

/**
 * Sets the default challenge ports (called by the `http` app when it starts).
 *
 * @example
 * ```ts
 * import { challengePorts, setChallengePorts } from "./ports.ts";
 * setChallengePorts({ http: 8080, https: 8443 });
 * challengePorts().http; // 8080
 * setChallengePorts({ http: 80, https: 443 });
 * ```
 */
export function setChallengePorts(ports: { http: number; https: number }): void {
  current = { ...ports };
}

/** The default challenge ports. */
export function challengePorts(): { http: number; https: number } {
  return current;
}

/**
 * Client authentication per connection policy: which policy a connection falls under is
 * chosen by its SNI the way the certificate is (the first policy whose `match.sni` names it,
 * wildcards included, or one without `match`), and that policy's `client_authentication`
 * decides. A certificate source given to a listener carries the choice (`withClientAuth`).
 *
 * @module
 */
import type { ProvisionContext } from "../../module/mod.ts";
import type { ClientCertificateCheck, TlsCertificateSource } from "../../module/listener.ts";
import { clientAuthActive, provisionClientAuth } from "./mod.ts";

/** The policies' client authentication, by server name. */
export interface PolicyClientAuth {
  /** The check for a connection with this SNI ("" for none); null when it authenticates no client. */
  forName(serverName: string): ClientCertificateCheck | null;
}

function matchName(name: string, pattern: string): boolean {
  if (pattern === name) return true;
  if (!pattern.startsWith("*.")) return false;
  const dot = name.indexOf(".");
  return dot > 0 && name.slice(dot) === pattern.slice(1);
}

/**
 * Provisions the `client_authentication` of each policy (raw JSON, null when absent); null
 * when no policy authenticates clients.
 *
 * @example
 * ```ts
 * import { provisionPolicyClientAuth } from "./policies.ts";
 * // await provisionPolicyClientAuth([{ sni: [], clientAuth: { mode: "request" } }], "p", ctx)
 * ```
 */
export async function provisionPolicyClientAuth(
  policies: { sni: string[]; clientAuth?: Record<string, unknown> }[],
  where: string,
  ctx: ProvisionContext,
): Promise<PolicyClientAuth | null> {
  if (!policies.some((p) => clientAuthActive(p.clientAuth))) return null;
  const checks: (ClientCertificateCheck | null)[] = [];
  for (let i = 0; i < policies.length; i++) {
    const raw = policies[i].clientAuth;
    checks.push(
      clientAuthActive(raw)
        ? await provisionClientAuth(raw!, `${where}[${i}].client_authentication`, ctx)
        : null,
    );
  }
  return {
    forName(serverName) {
      const name = serverName.toLowerCase().replace(/\.$/, "");
      const i = policies.findIndex((p) =>
        p.sni.length === 0 || p.sni.some((s) => matchName(name, s))
      );
      return i < 0 ? null : checks[i];
    },
  };
}

/** A certificate source that also carries the policies' client authentication. */
export function withClientAuth(
  source: TlsCertificateSource,
  auth: PolicyClientAuth | null,
): TlsCertificateSource {
  if (!auth) return source;
  return {
    getCertificate: (name) => source.getCertificate(name),
    subscribe: (fn) => source.subscribe(fn),
    fixedCertificate: source.fixedCertificate && (() => source.fixedCertificate!()),
    requestsClientCertificates: true,
    clientAuth: (name) => auth.forName(name),
  };
}

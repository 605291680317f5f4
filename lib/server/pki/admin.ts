/**
 * `admin.api.pki`: the admin endpoints of the local CAs, provisioned with every config.
 *
 * - `GET /pki/ca/<id>`: the CA info record (`id`, `name`, `root_common_name`,
 *   `intermediate_common_name`, `root_certificate`, `intermediate_certificate`).
 * - `GET /pki/ca/<id>/certificates`: the PEM chain, intermediate then root
 *   (`application/pem-certificate-chain`); what `gatehouse trust` fetches.
 *
 * `local` is provisioned on demand (even with no `pki` app in the config); any other id that
 * is not configured is a 404 `{"error": "no certificate authority configured with id: <id>"}`.
 *
 * @module
 */
import type { ModuleDefinition, ProvisionContext } from "../module/mod.ts";
import type { ModuleInstance } from "../module/instance.ts";
import { AdminError } from "../errors.ts";
import type { PkiApp } from "./app.ts";
import { CertificateAuthority, DEFAULT_CA_ID } from "./ca.ts";

async function findCA(
  ctx: ProvisionContext,
  id: string,
  standalone: { ca?: Promise<CertificateAuthority> },
): Promise<CertificateAuthority> {
  let app: PkiApp | undefined;
  try {
    app = await ctx.app<PkiApp>("pki");
  } catch (e) {
    throw new AdminError("internal", `pki app: ${(e as Error).message}`);
  }
  if (app?.cas.has(id)) return app.cas.get(id)!;
  if (id !== DEFAULT_CA_ID) {
    throw new AdminError("not_found", `no certificate authority configured with id: ${id}`);
  }
  try {
    if (app) return await app.getCA(id);
    standalone.ca ??= CertificateAuthority.provision(
      id,
      {},
      ctx.storage,
      ctx.logger("pki.ca.local"),
    );
    return await standalone.ca;
  } catch (e) {
    standalone.ca = undefined;
    throw new AdminError("internal", `failed to provision CA ${id}: ${(e as Error).message}`);
  }
}

/**
 * Registry entry of `admin.api.pki`.
 *
 * @example
 * ```ts
 * import { pkiAdminModule } from "./admin.ts";
 * pkiAdminModule.id; // "admin.api.pki"
 * ```
 */
export const pkiAdminModule: ModuleDefinition = {
  id: "admin.api.pki",
  create(_config, ctx): ModuleInstance {
    const standalone: { ca?: Promise<CertificateAuthority> } = {};
    ctx.registerAdminRoute({
      pattern: "/pki/",
      async handle(req) {
        const path = new URL(req.url).pathname;
        const parts = path.slice("/pki/".length).split("/");
        const info = parts.length === 2 && parts[0] === "ca" && parts[1] !== "";
        const certs = parts.length === 3 && parts[0] === "ca" && parts[1] !== "" &&
          parts[2] === "certificates";
        if (!info && !certs) throw new AdminError("not_found", `resource not found: ${path}`);
        if (req.method !== "GET") {
          throw new AdminError("method_not_allowed", `method not allowed: ${req.method}`);
        }
        const ca = await findCA(ctx, decodeURIComponent(parts[1]), standalone);
        if (info) {
          return new Response(JSON.stringify(ca.info()), {
            headers: { "content-type": "application/json" },
          });
        }
        return new Response(ca.intermediatePem + ca.rootPem, {
          headers: { "content-type": "application/pem-certificate-chain" },
        });
      },
    });
    return {};
  },
};

/**
 * `admin.api.tls_revoke`: revoke and replace a managed certificate through the admin API.
 *
 * `POST /tls/revoke` with `{"name": "<managed name>", "reason": <code>}` revokes the
 * certificate the server manages for that name with the issuer that obtained it (ACME:
 * RFC 8555 §7.6), removes it from storage and obtains a replacement, which is served from the
 * next handshake. `reason` is an RFC 5280 code: 0 unspecified (default), 1 key compromise,
 * 3 affiliation changed, 4 superseded, 5 cessation of operation. Answers
 * `{"revoked": "<serial>", "replacement": "<serial>"}` once the replacement is served.
 *
 * Caddy has no such endpoint; certmagic revokes through its library API. It is here so that
 * an operator can act on a key compromise without a restart.
 *
 * @module
 */
import type { ModuleDefinition } from "../module/mod.ts";
import type { ModuleInstance } from "../module/instance.ts";
import { AdminError } from "../errors.ts";
import type { TlsApp } from "./app.ts";

/**
 * Registry entry of `admin.api.tls_revoke`.
 *
 * @example
 * ```ts
 * import { tlsRevokeAdminModule } from "./revoke_admin.ts";
 * tlsRevokeAdminModule.id; // "admin.api.tls_revoke"
 * ```
 */
export const tlsRevokeAdminModule: ModuleDefinition = {
  id: "admin.api.tls_revoke",
  create(_config, ctx): ModuleInstance {
    ctx.registerAdminRoute({
      pattern: "/tls/revoke",
      async handle(req) {
        if (new URL(req.url).pathname !== "/tls/revoke") {
          throw new AdminError("not_found", "resource not found");
        }
        if (req.method !== "POST") {
          throw new AdminError("method_not_allowed", `method not allowed: ${req.method}`);
        }
        let body: { name?: unknown; reason?: unknown };
        try {
          body = await req.json();
        } catch {
          throw new AdminError("bad_request", 'body must be JSON: {"name": "...", "reason": 0}');
        }
        if (typeof body?.name !== "string" || !body.name) {
          throw new AdminError("bad_request", "name: the managed name whose certificate to revoke");
        }
        const reason = body.reason ?? 0;
        if (typeof reason !== "number" || ![0, 1, 3, 4, 5].includes(reason)) {
          throw new AdminError("bad_request", "reason: must be 0, 1, 3, 4 or 5 (RFC 5280)");
        }
        const app = await ctx.app<TlsApp>("tls");
        if (!app) throw new AdminError("not_found", "no tls app is configured");
        try {
          const out = await app.revoke(body.name, reason);
          return new Response(JSON.stringify(out), {
            headers: { "content-type": "application/json" },
          });
        } catch (e) {
          const msg = (e as Error).message;
          throw new AdminError(
            msg.startsWith("no managed certificate") ? "not_found" : "internal",
            msg,
          );
        }
      },
    });
    return {};
  },
};

/**
 * `acme_server`: the `pki` app's CA answering ACME (RFC 8555) under
 * `<path_prefix><ca>/` (by default `/acme/local/directory`): the directory, nonces,
 * accounts (new, update, deactivate, their orders), orders, authorizations, challenges
 * validated by http-01, dns-01 or tls-alpn-01 (validate.ts), finalization with a CSR
 * (finalize.ts) and certificate download; `revoke-cert` by the issuing account. Requests
 * outside the prefix go to the next handler. `key-change` is answered as not supported.
 *
 * @module
 */
import type { JWK } from "jose";
import type { ModuleDefinition, ProvisionContext } from "../../../module/mod.ts";
import type { PkiApp } from "../../../pki/app.ts";
import type { Logger } from "../../../module/instance.ts";
import type { RequestContext } from "../../context.ts";
import { ConfigError } from "../../../config/error.ts";
import { goDurationString } from "../../../config/duration.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import {
  type ACMEServerConfig,
  type ACMEServerSettings,
  acmeServerSettings,
  decodeACMEServer,
} from "./config.ts";
import type { Ctx } from "./context.ts";
import { finalizeOrder } from "./finalize.ts";
import { Nonces, type Verified, verifyRequest } from "./jws.ts";
import { ACMEProblem } from "./problem.ts";
import { newOrder, orderJSON, refreshOrder } from "./orders.ts";
import { type Account, ACMEStore, type Authorization, newId } from "./store.ts";
import { validateChallenge, ValidationError } from "./validate.ts";

const MAX_BODY = 64 * 1024;

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function accountJSON(a: Account, base: string): Record<string, unknown> {
  return { status: a.status, contact: a.contact, orders: `${base}/account/${a.id}/orders` };
}

function authzJSON(a: Authorization, base: string): Record<string, unknown> {
  return {
    identifier: a.identifier,
    status: a.status,
    expires: a.expires,
    ...(a.wildcard ? { wildcard: true } : {}),
    challenges: a.challenges.map((ch) => ({
      type: ch.type,
      url: `${base}/challenge/${a.id}/${ch.id}`,
      token: ch.token,
      status: ch.status,
      ...(ch.validated ? { validated: ch.validated } : {}),
      ...(ch.error ? { error: ch.error } : {}),
    })),
  };
}

async function readBody(c: RequestContext): Promise<unknown> {
  const body = c.requestBody();
  if (!body) throw new ACMEProblem("malformed", "a JWS body is required");
  const parts: Uint8Array[] = [];
  let n = 0;
  for await (const chunk of body) {
    n += chunk.length;
    if (n > MAX_BODY) throw new ACMEProblem("malformed", `request body over ${MAX_BODY} bytes`);
    parts.push(chunk);
  }
  const all = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    all.set(p, off);
    off += p.length;
  }
  try {
    return JSON.parse(new TextDecoder().decode(all));
  } catch {
    throw new ACMEProblem("malformed", "the request body is not JSON");
  }
}

function parsePayload(v: Verified): Record<string, unknown> {
  if (v.payload === "") return {};
  try {
    const p = JSON.parse(v.payload);
    if (typeof p === "object" && p !== null && !Array.isArray(p)) return p;
  } catch { /* below */ }
  throw new ACMEProblem("malformed", "the JWS payload is not a JSON object");
}

/** Runs a challenge's validation and records the outcome on the authorization. */
async function runValidation(x: Ctx, authzId: string, chId: string, thumbprint: string) {
  const a = await x.store.authz(authzId);
  const ch = a?.challenges.find((c) => c.id === chId);
  if (!a || !ch) return;
  try {
    await validateChallenge(ch, a.identifier, thumbprint, x.cfg.resolvers);
    ch.status = "valid";
    ch.validated = new Date().toISOString();
    a.status = "valid";
  } catch (e) {
    ch.status = "invalid";
    const type = e instanceof ValidationError ? e.type : "serverInternal";
    ch.error = new ACMEProblem(type, (e as Error).message).toJSON();
    a.status = "invalid";
    x.log("challenge failed", { identifier: a.identifier.value, type: ch.type, error: ch.error });
  }
  await x.store.saveAuthz(a);
}

async function route(c: RequestContext, x: Ctx, rest: string, nonces: Nonces): Promise<Response> {
  const url = `${x.base}/${rest}`;
  if (rest === "directory") {
    if (c.method !== "GET") throw new ACMEProblem("malformed", "GET the directory");
    // Caddy's document byte for byte (step-ca's, written by Go's JSON encoder: a final newline):
    // the five URLs and no `meta`, as current Caddy answers (caddytest/integration/
    // acmeserver_test.go, TestACMEServerDirectory); Caddy 2.6.2 added an empty `"meta":{}`.
    const directory = {
      newNonce: `${x.base}/new-nonce`,
      newAccount: `${x.base}/new-account`,
      newOrder: `${x.base}/new-order`,
      revokeCert: `${x.base}/revoke-cert`,
      keyChange: `${x.base}/key-change`,
    };
    return new Response(JSON.stringify(directory) + "\n", {
      headers: { "content-type": "application/json" },
    });
  }
  if (rest === "new-nonce") {
    return new Response(null, {
      status: c.method === "GET" ? 204 : 200,
      headers: { "cache-control": "no-store" },
    });
  }
  if (c.method !== "POST") throw new ACMEProblem("malformed", "ACME resources are POSTed (JWS)");
  const body = await readBody(c);
  const accountKey = async (kid: string): Promise<JWK | null> => {
    const prefix = `${x.base}/account/`;
    if (!kid.startsWith(prefix)) return null;
    const a = await x.store.account(kid.slice(prefix.length));
    return a && a.status === "valid" ? a.jwk : null;
  };
  const v = await verifyRequest(body, url, nonces, accountKey, rest === "new-account");
  const payload = parsePayload(v);

  if (rest === "new-account") {
    const existing = await x.store.accountByKey(v.thumbprint);
    if (existing) {
      return json(accountJSON(existing, x.base), 200, {
        location: `${x.base}/account/${existing.id}`,
      });
    }
    if (payload.onlyReturnExisting === true) {
      throw new ACMEProblem("accountDoesNotExist", "no account for this key");
    }
    const contact = Array.isArray(payload.contact) ? payload.contact : [];
    if (contact.some((m) => typeof m !== "string" || !m.startsWith("mailto:"))) {
      throw new ACMEProblem("invalidContact", "contacts must be mailto: URLs");
    }
    const a: Account = {
      id: newId(),
      jwk: v.jwk,
      thumbprint: v.thumbprint,
      status: "valid",
      contact: contact as string[],
      orders: [],
      createdAt: new Date().toISOString(),
    };
    await x.store.saveAccount(a);
    return json(accountJSON(a, x.base), 201, { location: `${x.base}/account/${a.id}` });
  }

  const account = (await x.store.accountByKey(v.thumbprint))!;
  const [kind, id, sub] = rest.split("/");
  switch (kind) {
    case "account": {
      if (id !== account.id) throw new ACMEProblem("unauthorized", "not this account's resource");
      if (sub === "orders") {
        return json({ orders: account.orders.map((o) => `${x.base}/order/${o}`) });
      }
      if (Array.isArray(payload.contact)) account.contact = payload.contact as string[];
      if (payload.status === "deactivated") account.status = "deactivated";
      await x.store.saveAccount(account);
      return json(accountJSON(account, x.base));
    }
    case "new-order": {
      const order = await newOrder(x, account, payload);
      return json(orderJSON(order, x.base), 201, { location: `${x.base}/order/${order.id}` });
    }
    case "order": {
      const order = await x.store.order(id ?? "");
      if (!order || order.account !== account.id) {
        throw new ACMEProblem("notFound", "no such order");
      }
      await refreshOrder(x, order);
      if (sub === "finalize") await finalizeOrder(x, order, payload);
      return json(orderJSON(order, x.base), 200, { location: `${x.base}/order/${order.id}` });
    }
    case "authz": {
      const a = await x.store.authz(id ?? "");
      if (!a || a.account !== account.id) {
        throw new ACMEProblem("notFound", "no such authorization");
      }
      if (payload.status === "deactivated") {
        a.status = "deactivated";
        await x.store.saveAuthz(a);
      }
      return json(authzJSON(a, x.base));
    }
    case "challenge": {
      const a = await x.store.authz(id ?? "");
      const ch = a?.challenges.find((c) => c.id === sub);
      if (!a || !ch || a.account !== account.id) {
        throw new ACMEProblem("notFound", "no such challenge");
      }
      if (v.payload !== "" && ch.status === "pending" && a.status === "pending") {
        ch.status = "processing";
        await x.store.saveAuthz(a);
        runValidation(x, a.id, ch.id, account.thumbprint).catch((e) =>
          x.log("validation error", { error: String(e) })
        );
      }
      const shown = authzJSON(a, x.base).challenges as Record<string, unknown>[];
      return json(shown[a.challenges.indexOf(ch)], 200, {
        link: `<${x.base}/authz/${a.id}>;rel="up"`,
      });
    }
    case "certificate": {
      const cert = await x.store.certificate(id ?? "");
      if (!cert || cert.account !== account.id) {
        throw new ACMEProblem("notFound", "no such certificate");
      }
      return new Response(cert.chain, {
        headers: { "content-type": "application/pem-certificate-chain" },
      });
    }
    case "revoke-cert": {
      const der = typeof payload.certificate === "string" ? payload.certificate : "";
      const { revokeCertificate } = await import("./finalize.ts");
      await revokeCertificate(x, account, der);
      return new Response(null, { status: 200 });
    }
    case "key-change":
      throw new ACMEProblem("unsupported", "key-change is not supported by this server");
  }
  throw new ACMEProblem("notFound", `no ACME resource ${rest}`);
}

/** An ACME server handler over a provisioned CA. */
export class ACMEServer implements HttpHandler {
  #cfg: ACMEServerSettings;
  #store: ACMEStore;
  #pki: PkiApp;
  #logger: Logger;
  #nonces = new Nonces();
  /** `<path_prefix><ca>/`. */
  #prefix: string;

  private constructor(cfg: ACMEServerSettings, pki: PkiApp, ctx: ProvisionContext) {
    this.#cfg = cfg;
    this.#pki = pki;
    this.#logger = ctx.logger("http.handlers.acme_server");
    this.#store = new ACMEStore(ctx.storage, cfg.ca);
    this.#prefix = `${cfg.pathPrefix}${cfg.ca}/`;
  }

  /**
   * Provisions the handler: the `pki` app's CA, whose signing certificate must outlive the
   * certificates it issues.
   */
  static async provision(config: ACMEServerConfig, ctx: ProvisionContext): Promise<ACMEServer> {
    const where = "http.handlers.acme_server";
    const cfg = acmeServerSettings(config);
    const pki = await ctx.app<PkiApp>("pki");
    if (!pki) throw new ConfigError("invalid_config", `${where}: the pki app is not available`);
    const ca = await pki.getCA(cfg.ca);
    // Caddy's check (modules/caddypki/acmeserver/acmeserver.go, Provision): against the
    // configured lifetime of intermediates the CA generates
    if (!ca.config.intermediate && cfg.lifetimeMs >= ca.intermediateLifetimeMs) {
      throw new ConfigError(
        "invalid_config",
        `${where}.lifetime: certificate lifetime (${goDurationString(cfg.lifetimeMs)}) should ` +
          `be less than intermediate certificate lifetime (${
            goDurationString(ca.intermediateLifetimeMs)
          })`,
      );
    }
    const signer = ca.signer(cfg.signWithRoot);
    const { x509 } = await import("../../../pki/x509.ts");
    const issuer = new (await x509()).X509Certificate(signer.pem);
    if (cfg.lifetimeMs >= issuer.notAfter.getTime() - issuer.notBefore.getTime()) {
      throw new ConfigError(
        "invalid_config",
        `${where}.lifetime: certificate lifetime should be less than the ` +
          `${cfg.signWithRoot ? "root" : "intermediate"} certificate's lifetime`,
      );
    }
    const server = new ACMEServer(cfg, pki, ctx);
    if (cfg.policy.allowsAll) {
      server.#logger.warn(
        "acme_server policy has no allow/deny rules; order identifiers are unrestricted (allow-all)",
        { ca: cfg.ca },
      );
    }
    return server;
  }

  async serveHTTP(c: RequestContext, next: Next): Promise<Response> {
    if (!c.path.startsWith(this.#cfg.pathPrefix)) return next(c);
    const x: Ctx = {
      cfg: this.#cfg,
      store: this.#store,
      pki: this.#pki,
      base: `${c.scheme}://${this.#cfg.host || c.host}${this.#prefix.slice(0, -1)}`,
      log: (msg, fields) => this.#logger.info(msg, fields),
    };
    const headers = {
      "replay-nonce": this.#nonces.issue(),
      link: `<${x.base}/directory>;rel="index"`,
      "cache-control": "no-store",
    };
    const res = await this.#answer(c, x);
    for (const [k, v] of Object.entries(headers)) {
      if (!res.headers.has(k)) res.headers.set(k, v);
    }
    return res;
  }

  /** The endpoint's answer, or the problem document of its failure. */
  async #answer(c: RequestContext, x: Ctx): Promise<Response> {
    try {
      if (!c.path.startsWith(this.#prefix)) {
        throw new ACMEProblem("notFound", `no CA here: ACME is served under ${this.#prefix}`);
      }
      return await route(c, x, c.path.slice(this.#prefix.length), this.#nonces);
    } catch (e) {
      const p = e instanceof ACMEProblem
        ? e
        : new ACMEProblem("serverInternal", (e as Error)?.message ?? String(e));
      if (p.status >= 500) this.#logger.error("acme request failed", { error: p.message });
      return new Response(JSON.stringify(p.toJSON()), {
        status: p.status,
        headers: { "content-type": "application/problem+json" },
      });
    }
  }
}

/** Registry entry. */
export const acmeServerModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.acme_server",
  create: (config, ctx) => ACMEServer.provision(decodeACMEServer(config), ctx),
};

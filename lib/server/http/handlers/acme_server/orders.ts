/**
 * Orders of the ACME server: creating one (identifiers checked against the policy, one
 * authorization per identifier with a challenge of each enabled type that fits it: dns-01
 * only for wildcards, no dns-01 for IP addresses), its JSON, and its status derived from its
 * authorizations (`pending` → `ready` once all are valid; `invalid` when one fails or the
 * order expires).
 *
 * @module
 */
import { parseIP } from "../../../net/ip.ts";
import type { Ctx } from "./context.ts";
import { ACMEProblem } from "./problem.ts";
import {
  type Account,
  type Authorization,
  type Challenge,
  type Identifier,
  newId,
  type Order,
} from "./store.ts";

const ORDER_TTL = 24 * 3_600_000;
const MAX_IDENTIFIERS = 100;

/** The order as ACME JSON. */
export function orderJSON(o: Order, base: string): Record<string, unknown> {
  return {
    status: o.status,
    expires: o.expires,
    identifiers: o.identifiers,
    authorizations: o.authorizations.map((a) => `${base}/authz/${a}`),
    finalize: `${base}/order/${o.id}/finalize`,
    ...(o.notBefore ? { notBefore: o.notBefore } : {}),
    ...(o.notAfter ? { notAfter: o.notAfter } : {}),
    ...(o.certificate ? { certificate: `${base}/certificate/${o.certificate}` } : {}),
    ...(o.error ? { error: o.error } : {}),
  };
}

function identifierOf(raw: unknown): Identifier {
  const r = raw as { type?: unknown; value?: unknown };
  if (typeof r !== "object" || r === null || typeof r.value !== "string" || !r.value) {
    throw new ACMEProblem("malformed", "an identifier needs a type and a value");
  }
  if (r.type === "dns") {
    const v = r.value.toLowerCase().replace(/\.$/, "");
    if (
      !/^(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/
        .test(v)
    ) {
      throw new ACMEProblem("rejectedIdentifier", `${JSON.stringify(r.value)} is not a DNS name`);
    }
    return { type: "dns", value: v };
  }
  if (r.type === "ip") {
    if (parseIP(r.value) === null) {
      throw new ACMEProblem(
        "rejectedIdentifier",
        `${JSON.stringify(r.value)} is not an IP address`,
      );
    }
    return { type: "ip", value: r.value };
  }
  throw new ACMEProblem("unsupportedIdentifier", `identifier type ${JSON.stringify(r.type)}`);
}

/** Creates an order from a new-order payload. */
export async function newOrder(
  x: Ctx,
  account: Account,
  payload: Record<string, unknown>,
): Promise<Order> {
  const raw = payload.identifiers;
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new ACMEProblem("malformed", "an order needs identifiers");
  }
  if (raw.length > MAX_IDENTIFIERS) {
    throw new ACMEProblem("rejectedIdentifier", `at most ${MAX_IDENTIFIERS} identifiers`);
  }
  const identifiers = raw.map(identifierOf);
  for (const id of identifiers) {
    const why = x.cfg.policy.refuse(id.type, id.value);
    if (why) throw new ACMEProblem("rejectedIdentifier", why);
  }
  const expires = new Date(Date.now() + ORDER_TTL).toISOString();
  const authzIds: string[] = [];
  for (const id of identifiers) {
    const wildcard = id.type === "dns" && id.value.startsWith("*.");
    const types = x.cfg.challenges.filter((t) =>
      wildcard ? t === "dns-01" : !(id.type === "ip" && t === "dns-01")
    );
    if (!types.length) {
      throw new ACMEProblem(
        "rejectedIdentifier",
        `no enabled challenge can validate ${id.value} (enabled: ${x.cfg.challenges.join(", ")})`,
      );
    }
    const challenges: Challenge[] = types.map((type) => ({
      id: newId(),
      type,
      token: newId() + newId(),
      status: "pending",
    }));
    const a: Authorization = {
      id: newId(),
      account: account.id,
      identifier: wildcard ? { type: "dns", value: id.value.slice(2) } : id,
      wildcard,
      status: "pending",
      expires,
      challenges,
    };
    await x.store.saveAuthz(a);
    authzIds.push(a.id);
  }
  const order: Order = {
    id: newId(),
    account: account.id,
    status: "pending",
    expires,
    identifiers,
    authorizations: authzIds,
  };
  for (const k of ["notBefore", "notAfter"] as const) {
    if (typeof payload[k] === "string") order[k] = payload[k] as string;
  }
  await x.store.saveOrder(order);
  account.orders.push(order.id);
  if (account.orders.length > 1000) account.orders.splice(0, account.orders.length - 1000);
  await x.store.saveAccount(account);
  return order;
}

/** Updates a pending order's status from its authorizations. */
export async function refreshOrder(x: Ctx, o: Order): Promise<void> {
  if (o.status !== "pending" && o.status !== "ready") return;
  if (Date.parse(o.expires) < Date.now()) {
    o.status = "invalid";
    o.error = new ACMEProblem("malformed", "the order expired").toJSON();
    await x.store.saveOrder(o);
    return;
  }
  const authz = await Promise.all(o.authorizations.map((id) => x.store.authz(id)));
  const before = o.status;
  if (authz.some((a) => !a || a.status === "invalid" || a.status === "deactivated")) {
    o.status = "invalid";
    const failed = authz.find((a) => a?.status === "invalid");
    o.error = failed?.challenges.find((c) => c.error)?.error ??
      new ACMEProblem("unauthorized", "an authorization is no longer valid").toJSON();
  } else if (authz.every((a) => a!.status === "valid")) o.status = "ready";
  if (o.status !== before) await x.store.saveOrder(o);
}

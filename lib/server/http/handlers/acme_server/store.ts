/**
 * The ACME server's state: accounts (by id and by key thumbprint), orders, authorizations
 * with their challenges, and issued certificates, kept in the configured storage under
 * `acme_server/<ca>/` (so a restart or another instance on the same storage sees them) with
 * a memory cache in front.
 *
 * @module
 */
import type { JWK } from "jose";
import type { Storage } from "../../../module/storage.ts";
import type { ChallengeType } from "./config.ts";

/** An account. */
export interface Account {
  id: string;
  jwk: JWK;
  thumbprint: string;
  status: "valid" | "deactivated" | "revoked";
  contact: string[];
  orders: string[];
  createdAt: string;
}

/** An identifier of an order. */
export interface Identifier {
  type: "dns" | "ip";
  value: string;
}

/** A challenge of an authorization. */
export interface Challenge {
  id: string;
  type: ChallengeType;
  token: string;
  status: "pending" | "processing" | "valid" | "invalid";
  validated?: string;
  error?: Record<string, unknown>;
}

/** An authorization. */
export interface Authorization {
  id: string;
  account: string;
  identifier: Identifier;
  wildcard: boolean;
  status: "pending" | "valid" | "invalid" | "deactivated" | "expired";
  expires: string;
  challenges: Challenge[];
}

/** An order. */
export interface Order {
  id: string;
  account: string;
  status: "pending" | "ready" | "processing" | "valid" | "invalid";
  expires: string;
  identifiers: Identifier[];
  authorizations: string[];
  notBefore?: string;
  notAfter?: string;
  certificate?: string;
  error?: Record<string, unknown>;
}

/** An issued certificate. */
export interface IssuedCertificate {
  id: string;
  account: string;
  /** PEM chain: the leaf, then its issuer. */
  chain: string;
  revoked?: string;
}

type Kind = "accounts" | "keys" | "orders" | "authz" | "certs";

/** A random id (URL-safe). */
export function newId(): string {
  const b = crypto.getRandomValues(new Uint8Array(12));
  return btoa(String.fromCharCode(...b)).replace(/\+/g, "-").replace(/\//g, "_");
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The state of one CA's ACME server. */
export class ACMEStore {
  #cache = new Map<string, unknown>();

  /** State of CA `ca` in `storage`. */
  constructor(readonly storage: Storage, readonly ca: string) {}

  #key(kind: Kind, id: string): string {
    return `acme_server/${this.ca.toLowerCase().replace(/[^\w.-]/g, "")}/${kind}/${id}.json`;
  }

  async #get<T>(kind: Kind, id: string): Promise<T | null> {
    if (!/^[\w-]+$/.test(id)) return null;
    const k = this.#key(kind, id);
    if (this.#cache.has(k)) return structuredClone(this.#cache.get(k) as T);
    try {
      const v = JSON.parse(dec.decode(await this.storage.load(k))) as T;
      this.#cache.set(k, v);
      return structuredClone(v);
    } catch {
      return null;
    }
  }

  async #put(kind: Kind, id: string, v: unknown): Promise<void> {
    const k = this.#key(kind, id);
    await this.storage.store(k, enc.encode(JSON.stringify(v)));
    if (this.#cache.size > 5000) this.#cache.clear();
    this.#cache.set(k, structuredClone(v));
  }

  /** An account by id. */
  account(id: string): Promise<Account | null> {
    return this.#get<Account>("accounts", id);
  }
  /** The account of a key thumbprint. */
  async accountByKey(thumbprint: string): Promise<Account | null> {
    const ref = await this.#get<{ id: string }>("keys", thumbprint);
    return ref ? await this.account(ref.id) : null;
  }
  /** Saves an account (and its key's index). */
  async saveAccount(a: Account): Promise<void> {
    await this.#put("accounts", a.id, a);
    await this.#put("keys", a.thumbprint, { id: a.id });
  }
  /** An order by id. */
  order(id: string): Promise<Order | null> {
    return this.#get<Order>("orders", id);
  }
  /** Saves an order. */
  saveOrder(o: Order): Promise<void> {
    return this.#put("orders", o.id, o);
  }
  /** An authorization by id. */
  authz(id: string): Promise<Authorization | null> {
    return this.#get<Authorization>("authz", id);
  }
  /** Saves an authorization. */
  saveAuthz(a: Authorization): Promise<void> {
    return this.#put("authz", a.id, a);
  }
  /** A certificate by id. */
  certificate(id: string): Promise<IssuedCertificate | null> {
    return this.#get<IssuedCertificate>("certs", id);
  }
  /** Saves a certificate. */
  saveCertificate(c: IssuedCertificate): Promise<void> {
    return this.#put("certs", c.id, c);
  }
}

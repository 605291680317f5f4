/**
 * One ACME order, start to finish (RFC 8555 §7.4): new order for the names, one challenge per
 * pending authorization (solved in parallel), finalize with the CSR, download the chain.
 *
 * Challenge choice follows certmagic: the enabled types in preference order, and a type that
 * failed for a name is tried last in later attempts of the same obtain (the `failed` set the
 * caller keeps between attempts).
 *
 * @module
 */
import type { Authorization, Client, Order } from "acme-client";
import type { Logger } from "../../module/instance.ts";
import { type DistributedSource, presentChallenge } from "./challenges.ts";
import { isIP } from "../../pki/x509.ts";
import { tlsAlpnCertificate } from "./crypto.ts";
import { holdHttpSolver, holdTlsAlpnSolver } from "./solvers.ts";
import { downloadChains, selectChain } from "./chains.ts";
import type { ChallengeType, PreferredChains } from "../issuers/acme_config.ts";
import {
  cleanUpDnsRecord,
  type DnsChallengeOptions,
  presentDnsRecord,
  waitForPropagation,
} from "../dns/solver.ts";

/** How challenges are answered. */
export interface SolverOptions {
  /** Enabled challenge types, preferred first. */
  types: ChallengeType[];
  /** Port the CA connects to for HTTP-01. */
  httpPort: number;
  /** Port the CA connects to for TLS-ALPN-01. */
  tlsPort: number;
  /** Interface standalone challenge listeners bind to (empty: all). */
  bindHost: string;
  /** Where challenges are shared with other instances. */
  shared?: DistributedSource;
  /** The DNS-01 challenge's provider and settings (when `types` has `dns-01`). */
  dns?: DnsChallengeOptions;
  /** Aborted when the config that asked is stopped. */
  signal?: AbortSignal;
}

/** Why an order failed, with the name and challenge when one failed. */
export class AcmeOrderError extends Error {
  /** Stable code. */
  readonly code: "challenge_failed" | "order_failed";
  /** The identifier whose challenge failed. */
  readonly identifier?: string;
  /** The challenge type that failed. */
  readonly challenge?: ChallengeType;
  /** Creates the error. */
  constructor(
    code: "challenge_failed" | "order_failed",
    message: string,
    detail: { identifier?: string; challenge?: ChallengeType } = {},
  ) {
    super(message);
    this.name = "AcmeOrderError";
    this.code = code;
    this.identifier = detail.identifier;
    this.challenge = detail.challenge;
  }
}

/** The result of a finished order. */
export interface OrderResult {
  /** PEM chain, leaf first. */
  chain: string;
  /** The order URL (for logs). */
  orderUrl: string;
}

/** Enabled types the CA offers for `authz`, types that failed for its name last. */
function candidates(
  authz: Authorization,
  types: ChallengeType[],
  failed: Set<string>,
): ChallengeType[] {
  const name = authz.identifier.value.toLowerCase();
  const offered = new Set<string>(authz.challenges.map((c) => c.type));
  const usable = types.filter((t) => offered.has(t));
  return [
    ...usable.filter((t) => !failed.has(`${name}|${t}`)),
    ...usable.filter((t) => failed.has(`${name}|${t}`)),
  ];
}

/** Solves one challenge; "unavailable" when its port cannot be used (nothing was sent). */
async function solve(
  client: Client,
  authz: Authorization,
  type: ChallengeType,
  solvers: SolverOptions,
  logger: Logger,
): Promise<"solved" | "unavailable"> {
  const name = authz.identifier.value.toLowerCase();
  const challenge = authz.challenges.find((c) => (c.type as string) === type)!;
  const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
  const cleanups: (() => Promise<void>)[] = [];
  try {
    if (type === "http-01") {
      cleanups.push((await holdHttpSolver(solvers.bindHost, solvers.httpPort, logger)).release);
      cleanups.push(
        await presentChallenge(
          { type, name, token: challenge.token, keyAuthorization },
          solvers.shared,
        ),
      );
    } else if (type === "dns-01") {
      const dns = solvers.dns;
      if (!dns) throw new Error("dns-01 challenge without a DNS provider");
      const presented = await presentDnsRecord(dns, name, keyAuthorization, logger, solvers.signal);
      cleanups.push(() => cleanUpDnsRecord(dns, presented, logger));
      await waitForPropagation(dns, presented, logger, solvers.signal);
    } else {
      const cert = await tlsAlpnCertificate(name, keyAuthorization);
      const hold = await holdTlsAlpnSolver(solvers.bindHost, solvers.tlsPort, name, cert, logger);
      cleanups.push(hold.release);
      if (!hold.standalone) return "unavailable";
    }
    logger.info("trying to solve challenge", { identifier: name, challenge_type: type });
    await client.completeChallenge(challenge);
    try {
      await client.waitForValidStatus(challenge);
    } catch (e) {
      throw new AcmeOrderError(
        "challenge_failed",
        `${type} challenge for ${name} failed: ${(e as Error).message}`,
        { identifier: name, challenge: type },
      );
    }
    logger.info("authorization finalized", { identifier: name, authz_status: "valid" });
    return "solved";
  } finally {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  }
}

async function solveAuthorization(
  client: Client,
  authz: Authorization,
  solvers: SolverOptions,
  failed: Set<string>,
  logger: Logger,
): Promise<void> {
  const name = authz.identifier.value.toLowerCase();
  const types = candidates(authz, solvers.types, failed);
  if (!types.length) {
    throw new AcmeOrderError(
      "challenge_failed",
      `no enabled challenge type for ${name} (offered: ${
        authz.challenges.map((c) => c.type).join(", ")
      }; enabled: ${solvers.types.join(", ") || "none"})`,
      { identifier: name },
    );
  }
  for (const type of types) {
    let result: "solved" | "unavailable";
    try {
      result = await solve(client, authz, type, solvers, logger);
    } catch (e) {
      failed.add(`${name}|${type}`);
      throw e;
    }
    if (result === "solved") return;
    logger.warn("challenge port in use; trying another challenge type", {
      identifier: name,
      challenge_type: type,
      port: solvers.tlsPort,
    });
  }
  throw new AcmeOrderError(
    "challenge_failed",
    `tls-alpn-01 challenge for ${name} cannot be answered: port ${solvers.tlsPort} is in use ` +
      `(an HTTPS listener cannot present the challenge certificate); enable the http challenge ` +
      `or set challenges.tls-alpn.alternate_port to a free port the CA's validations reach`,
    { identifier: name, challenge: "tls-alpn-01" },
  );
}

/** One order: what it certifies and how its challenges are solved. */
export interface OrderRequest {
  /** The names (DNS names and IP addresses) to certify. */
  names: string[];
  /** The certificate signing request, PEM. */
  csrPem: string;
  /** How the challenges are solved. */
  solvers: SolverOptions;
  /** Challenges that failed before (`name|type`); a challenge that fails is added. */
  failed: Set<string>;
  /** Where the order logs. */
  logger: Logger;
  /** `preferred_chains`: which of the CA's chains to keep. */
  preferredChains?: PreferredChains;
  /** Aborted when the config that asked is stopped. */
  signal?: AbortSignal;
}

/**
 * Runs one order and returns the certificate chain. Throws an AcmeOrderError; a failed
 * challenge is added to `failed` (`name|type`).
 *
 * @example
 * ```ts ignore
 * const { chain } = await runOrder(client, {
 *   names: ["example.com"],
 *   csrPem,
 *   solvers,
 *   failed: new Set(),
 *   logger,
 * });
 * ```
 */
export async function runOrder(client: Client, request: OrderRequest): Promise<OrderResult> {
  const { names, csrPem, solvers, failed, logger, preferredChains, signal } = request;
  signal?.throwIfAborted();
  let order: Order;
  try {
    order = await client.createOrder({
      identifiers: names.map((n) => ({ type: isIP(n) ? "ip" : "dns", value: n })),
    });
  } catch (e) {
    throw new AcmeOrderError("order_failed", `creating order: ${(e as Error).message}`);
  }
  logger.info("order created", { identifiers: names, order: order.url });
  const authzs = await client.getAuthorizations(order);
  const pending = authzs.filter((a) => a.status === "pending");
  for (const a of authzs) {
    if (a.status !== "pending" && a.status !== "valid") {
      throw new AcmeOrderError(
        "order_failed",
        `authorization for ${a.identifier.value} is ${a.status}`,
        { identifier: a.identifier.value },
      );
    }
  }
  const withSignal = { ...solvers, signal: solvers.signal ?? signal };
  const results = await Promise.allSettled(
    pending.map((authz) => solveAuthorization(client, authz, withSignal, failed, logger)),
  );
  const bad = results.find((r) => r.status === "rejected") as PromiseRejectedResult | undefined;
  if (bad) throw bad.reason;
  // The config that asked was stopped while the challenges ran: no certificate is wanted.
  signal?.throwIfAborted();
  logger.info("validations succeeded; finalizing order", { order: order.url });
  try {
    const finalized = await client.finalizeOrder(order, csrPem);
    const chains = await downloadChains(client, finalized);
    const chain = await selectChain(chains, preferredChains, logger);
    logger.info("successfully downloaded available certificate chains", { order: order.url });
    return { chain, orderUrl: order.url };
  } catch (e) {
    throw new AcmeOrderError("order_failed", `finalizing order: ${(e as Error).message}`);
  }
}

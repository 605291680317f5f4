/**
 * The DNS-01 challenge (RFC 8555 §8.4; certmagic's `DNS01Solver` and `DNSManager`): the TXT
 * record `_acme-challenge.<name>` (or `override_domain`) holding the key authorization digest
 * is added through the provider in the name's zone, the solver waits `propagation_delay`,
 * then until every resolver (or authoritative server) answers it (`propagation_timeout`,
 * default 2 minutes; -1 skips the check), tells the CA, and deletes the record afterwards
 * (also when the challenge failed).
 *
 * @module
 */
import type { Logger } from "../../module/instance.ts";
import { sleep } from "../../module/storage.ts";
import { absoluteFqdn, type DnsProvider, type DnsRecord, relativeName } from "./provider.ts";
import { findZone, type Resolver, txtPropagated } from "./resolvers.ts";

/** Default time to wait for a record to propagate (certmagic: 2 minutes). */
export const DEFAULT_PROPAGATION_TIMEOUT_MS = 2 * 60_000;
/** Time between two propagation checks. */
export const PROPAGATION_INTERVAL_MS = 2_000;

/** A decoded `challenges.dns` with its provider. */
export interface DnsChallengeOptions {
  /** The provider that changes the zone. */
  provider: DnsProvider;
  /** `ttl` in ms (0: the provider's default). */
  ttlMs: number;
  /** `propagation_delay` in ms. */
  propagationDelayMs: number;
  /** `propagation_timeout` in ms; -1: no propagation check; 0: the default. */
  propagationTimeoutMs: number;
  /** `resolvers` (else the tls app's, else the system's). */
  resolvers: Resolver[];
  /** `override_domain`: the name the TXT record is put at instead (a delegated name). */
  overrideDomain?: string;
}

/** A record presented for one challenge. */
export interface PresentedRecord {
  /** The zone it went into. */
  zone: string;
  /** The record as the provider added it. */
  record: DnsRecord;
  /** Its absolute name. */
  fqdn: string;
}

/** The TXT record name of a DNS-01 challenge for `identifier` (wildcard label dropped). */
export function challengeRecordName(identifier: string, overrideDomain?: string): string {
  if (overrideDomain) return absoluteFqdn(overrideDomain);
  return absoluteFqdn(`_acme-challenge.${identifier.replace(/^\*\./, "")}`);
}

/** A record to add for a challenge: its type, absolute name and value. */
export interface RecordToPresent {
  /** `TXT` (DNS-01) or `CNAME` (ZeroSSL's CNAME validation). */
  type: "TXT" | "CNAME";
  /** Its absolute name. */
  fqdn: string;
  /** Its value. */
  data: string;
}

/**
 * Adds one record through the provider, in the zone of its name (the provider's, else the
 * one the resolvers find).
 *
 * @example
 * ```ts ignore
 * const rec = await presentRecord(options, { type: "TXT", fqdn, data: digest }, logger);
 * ```
 */
export async function presentRecord(
  options: Pick<DnsChallengeOptions, "provider" | "resolvers" | "ttlMs">,
  { type, fqdn, data }: RecordToPresent,
  logger: Logger,
  signal?: AbortSignal,
): Promise<PresentedRecord> {
  let zone = options.provider.zoneOf?.(fqdn);
  if (!zone) {
    try {
      zone = await findZone(fqdn, options.resolvers, signal);
    } catch (e) {
      throw new Error(`could not determine the zone of ${fqdn}: ${(e as Error).message}`);
    }
  }
  const rr: DnsRecord = { type, name: relativeName(fqdn, zone), data, ttlMs: options.ttlMs };
  logger.debug("creating DNS record", {
    dns_name: fqdn,
    zone,
    record_name: rr.name,
    record_type: type,
    ...(type === "TXT" ? { record_ttl_ms: rr.ttlMs } : { record_data: rr.data }),
  });
  let added: DnsRecord[];
  try {
    added = await options.provider.appendRecords(zone, [rr], signal);
  } catch (e) {
    throw new Error(`adding the ${type} record ${fqdn} in zone ${zone}: ${(e as Error).message}`);
  }
  if (added.length !== 1) {
    throw new Error(
      `adding the ${type} record ${fqdn}: the provider added ${added.length} records`,
    );
  }
  return { zone, record: added[0], fqdn };
}

/**
 * Adds the challenge's TXT record (`value`: the key authorization digest) through the
 * provider.
 *
 * @example
 * ```ts ignore
 * const rec = await presentDnsRecord(options, "example.com", digest, logger);
 * try { await waitForPropagation(options, rec, logger); ... } finally {
 *   await cleanUpDnsRecord(options, rec, logger);
 * }
 * ```
 */
export async function presentDnsRecord(
  options: DnsChallengeOptions,
  identifier: string,
  value: string,
  logger: Logger,
  signal?: AbortSignal,
): Promise<PresentedRecord> {
  const fqdn = challengeRecordName(identifier, options.overrideDomain);
  return await presentRecord(options, { type: "TXT", fqdn, data: value }, logger, signal);
}

/** Why a record did not show: the timeout that passed and the last check's answer. */
export interface NotPropagated {
  /** The timeout, ms. */
  timeoutMs: number;
  /** What the last check found. */
  last: string;
}

/**
 * Waits `propagation_delay`, then asks `visible` every {@linkcode PROPAGATION_INTERVAL_MS}
 * (calling `checking` before each) until it answers true or `propagation_timeout` passes
 * (-1: no check). Resolves with why the record did not show, undefined when it did.
 *
 * @example
 * ```ts ignore
 * const why = await pollPropagation(options, () => txtPropagated(...), () => {}, signal);
 * ```
 */
export async function pollPropagation(
  options: Pick<DnsChallengeOptions, "propagationDelayMs" | "propagationTimeoutMs">,
  visible: () => Promise<boolean>,
  checking: () => void,
  signal?: AbortSignal,
): Promise<NotPropagated | undefined> {
  if (options.propagationDelayMs > 0) await sleep(options.propagationDelayMs, signal);
  if (options.propagationTimeoutMs < 0) return undefined;
  const timeout = options.propagationTimeoutMs || DEFAULT_PROPAGATION_TIMEOUT_MS;
  const end = Date.now() + timeout;
  let last = "";
  for (;;) {
    checking();
    try {
      if (await visible()) return undefined;
      last = "record not visible yet";
    } catch (e) {
      signal?.throwIfAborted();
      last = (e as Error).message;
    }
    if (Date.now() + PROPAGATION_INTERVAL_MS > end) break;
    await sleep(PROPAGATION_INTERVAL_MS, signal);
  }
  return { timeoutMs: timeout, last };
}

/** Waits `propagation_delay`, then until the record is visible (unless the check is off). */
export async function waitForPropagation(
  options: DnsChallengeOptions,
  presented: PresentedRecord,
  logger: Logger,
  signal?: AbortSignal,
): Promise<void> {
  const missing = await pollPropagation(
    options,
    () =>
      txtPropagated(
        presented.fqdn,
        presented.record.data,
        presented.zone,
        options.resolvers,
        signal,
      ),
    () =>
      logger.debug("checking DNS propagation", {
        fqdn: presented.fqdn,
        resolvers: options.resolvers.map((r) => `${r.ipAddr}:${r.port}`),
      }),
    signal,
  );
  if (!missing) return;
  throw new Error(
    `timed out after ${missing.timeoutMs} ms waiting for the TXT record ${presented.fqdn} to ` +
      `propagate (${missing.last}); check the DNS provider's config, or the resolvers asked`,
  );
}

/** Deletes the presented record (errors are logged, never thrown). */
export async function cleanUpDnsRecord(
  options: DnsChallengeOptions,
  presented: PresentedRecord,
  logger: Logger,
): Promise<void> {
  try {
    await options.provider.deleteRecords(presented.zone, [presented.record]);
    logger.debug("deleted DNS record", { fqdn: presented.fqdn, zone: presented.zone });
  } catch (e) {
    logger.warn("could not delete the challenge's DNS record", {
      fqdn: presented.fqdn,
      zone: presented.zone,
      error: (e as Error).message,
    });
  }
}

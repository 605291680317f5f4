/**
 * ZeroSSL's CNAME validation (the API's `CNAME_CSR_HASH` method, certmagic's `DNSManager`
 * with CNAME records): for each name, the record `cname_validation_p1` pointing at
 * `cname_validation_p2` is added through the DNS provider in the name's zone, then the issuer
 * waits `propagation_delay` and until every resolver (or authoritative server) answers it
 * (`propagation_timeout`, default 2 minutes; -1 skips the check). A record that does not show
 * in time is logged and ZeroSSL is asked anyway (it decides, as certmagic does). Records are
 * deleted afterwards, also when validation failed.
 *
 * @module
 */
import type { Logger } from "../../module/instance.ts";
import { absoluteFqdn, type DnsRecord, relativeName } from "../dns/provider.ts";
import { cnamePropagated, findZone } from "../dns/resolvers.ts";
import {
  cleanUpDnsRecord,
  DEFAULT_PROPAGATION_TIMEOUT_MS,
  type DnsChallengeOptions,
  type PresentedRecord,
  PROPAGATION_INTERVAL_MS,
} from "../dns/solver.ts";

/** The DNS settings of `cname_validation` (its `override_domain` is refused at load). */
export type CnameOptions = Omit<DnsChallengeOptions, "overrideDomain">;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/**
 * Adds the CNAME record `name` → `target` through the provider (the target gets a trailing
 * dot, as certmagic writes it).
 *
 * @example
 * ```ts ignore
 * const rec = await presentCname(options, "_ab12.example.com", "x.y.sectigo.com", logger);
 * ```
 */
export async function presentCname(
  options: CnameOptions,
  name: string,
  target: string,
  logger: Logger,
  signal?: AbortSignal,
): Promise<PresentedRecord> {
  const fqdn = absoluteFqdn(name);
  let zone = options.provider.zoneOf?.(fqdn);
  if (!zone) {
    try {
      zone = await findZone(fqdn, options.resolvers, signal);
    } catch (e) {
      throw new Error(`could not determine the zone of ${fqdn}: ${(e as Error).message}`);
    }
  }
  const rr: DnsRecord = {
    type: "CNAME",
    name: relativeName(fqdn, zone),
    data: absoluteFqdn(target),
    ttlMs: options.ttlMs,
  };
  logger.debug("creating DNS record", {
    dns_name: fqdn,
    zone,
    record_name: rr.name,
    record_type: "CNAME",
    record_data: rr.data,
  });
  let added: DnsRecord[];
  try {
    added = await options.provider.appendRecords(zone, [rr], signal);
  } catch (e) {
    throw new Error(`adding the CNAME record ${fqdn} in zone ${zone}: ${(e as Error).message}`);
  }
  if (added.length !== 1) {
    throw new Error(`adding the CNAME record ${fqdn}: the provider added ${added.length} records`);
  }
  return { zone, record: added[0], fqdn };
}

/**
 * Waits `propagation_delay`, then until the record is visible; resolves with why it is not
 * when the timeout passes (the caller logs it and goes on), undefined when it showed.
 */
export async function waitForCname(
  options: CnameOptions,
  presented: PresentedRecord,
  logger: Logger,
  signal?: AbortSignal,
): Promise<string | undefined> {
  if (options.propagationDelayMs > 0) await sleep(options.propagationDelayMs, signal);
  if (options.propagationTimeoutMs < 0) return undefined;
  const timeout = options.propagationTimeoutMs || DEFAULT_PROPAGATION_TIMEOUT_MS;
  const end = Date.now() + timeout;
  let last = "";
  for (;;) {
    logger.debug("checking DNS propagation", { fqdn: presented.fqdn, record_type: "CNAME" });
    try {
      if (
        await cnamePropagated(
          presented.fqdn,
          presented.record.data,
          presented.zone,
          options.resolvers,
          signal,
        )
      ) return undefined;
      last = "record not visible yet";
    } catch (e) {
      signal?.throwIfAborted();
      last = (e as Error).message;
    }
    if (Date.now() + PROPAGATION_INTERVAL_MS > end) break;
    await sleep(PROPAGATION_INTERVAL_MS, signal);
  }
  return `not visible after ${timeout} ms (${last})`;
}

/** Deletes the record (errors are logged, never thrown). */
export function cleanUpCname(
  options: CnameOptions,
  presented: PresentedRecord,
  logger: Logger,
): Promise<void> {
  return cleanUpDnsRecord(options, presented, logger);
}

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
import { absoluteFqdn } from "../dns/provider.ts";
import { cnamePropagated } from "../dns/resolvers.ts";
import {
  cleanUpDnsRecord,
  type DnsChallengeOptions,
  pollPropagation,
  type PresentedRecord,
  presentRecord,
} from "../dns/solver.ts";

/** The DNS settings of `cname_validation` (its `override_domain` is refused at load). */
export type CnameOptions = Omit<DnsChallengeOptions, "overrideDomain">;

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
  const record = { type: "CNAME" as const, fqdn: absoluteFqdn(name), data: absoluteFqdn(target) };
  return await presentRecord(options, record, logger, signal);
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
  const missing = await pollPropagation(
    options,
    () =>
      cnamePropagated(
        presented.fqdn,
        presented.record.data,
        presented.zone,
        options.resolvers,
        signal,
      ),
    () => logger.debug("checking DNS propagation", { fqdn: presented.fqdn, record_type: "CNAME" }),
    signal,
  );
  return missing && `not visible after ${missing.timeoutMs} ms (${missing.last})`;
}

/** Deletes the record (errors are logged, never thrown). */
export function cleanUpCname(
  options: CnameOptions,
  presented: PresentedRecord,
  logger: Logger,
): Promise<void> {
  return cleanUpDnsRecord(options, presented, logger);
}

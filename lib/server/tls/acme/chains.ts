/**
 * The certificate chains an ACME CA offers for one order (the default one and the
 * `Link: rel="alternate"` ones, RFC 8555 §7.4.2) and the choice among them by the issuer's
 * `preferred_chains` (certmagic's `selectPreferredChain`): `smallest` orders them by size
 * (true: smallest first; false: largest first), then the first chain with a certificate
 * issued by one of `any_common_name` (names in order), else the first whose top certificate
 * was issued by one of `root_common_name`, else the first.
 *
 * @module
 */
import type { Client, Order } from "acme-client";
import type { Logger } from "../../module/instance.ts";
import { x509 } from "../../pki/x509.ts";
import type { PreferredChains } from "../issuers/acme_config.ts";

interface ApiResponse {
  data: string | Uint8Array;
  headers: Record<string, string | undefined>;
}

/** acme-client's signed POST-as-GET (its `api.apiRequest`, which `getCertificate` uses). */
type ApiRequest = (url: string, payload: null, status: number[]) => Promise<ApiResponse>;

function text(data: string | Uint8Array): string {
  return typeof data === "string" ? data : new TextDecoder().decode(data);
}

/** The `rel="alternate"` URLs of a Link header. */
export function alternateLinks(header: string | undefined): string[] {
  if (!header) return [];
  const out: string[] = [];
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (m && /(^|;)\s*rel\s*=\s*"?alternate"?\s*(;|$)/i.test(m[2])) out.push(m[1]);
  }
  return out;
}

/** Downloads every chain the CA offers for a valid order: the default first. */
export async function downloadChains(client: Client, order: Order): Promise<string[]> {
  if (order.status !== "valid") order = await client.waitForValidStatus(order);
  if (!order.certificate) throw new Error("the order has no certificate URL");
  const api = (client as unknown as { api?: { apiRequest?: ApiRequest } }).api;
  if (typeof api?.apiRequest !== "function") {
    return [await client.getCertificate(order)];
  }
  const request = api.apiRequest.bind(api);
  const first = await request(order.certificate, null, [200]);
  const chains = [text(first.data)];
  for (const url of alternateLinks(first.headers.link)) {
    chains.push(text((await request(url, null, [200])).data));
  }
  return chains;
}

async function issuerNames(chain: string): Promise<string[]> {
  const x = await x509();
  const blocks = chain.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g);
  return (blocks ?? []).map((b) => new x.X509Certificate(b).issuerName.getField("CN")[0] ?? "");
}

/**
 * Picks the chain by the preferences (see the module doc).
 *
 * @example
 * ```ts ignore
 * const chain = await selectChain(await downloadChains(client, order), { rootCommonName: ["X"], anyCommonName: [] }, logger);
 * ```
 */
export async function selectChain(
  chains: string[],
  prefs: PreferredChains | undefined,
  logger: Logger,
): Promise<string> {
  if (chains.length <= 1 || !prefs) return chains[0];
  const list = [...chains];
  if (prefs.smallest !== undefined) {
    list.sort((a, b) => prefs.smallest ? a.length - b.length : b.length - a.length);
  }
  if (!prefs.anyCommonName.length && !prefs.rootCommonName.length) return list[0];
  const issuers = await Promise.all(list.map((c) => issuerNames(c).catch(() => [] as string[])));
  for (const cn of prefs.anyCommonName) {
    const i = issuers.findIndex((names) => names.includes(cn));
    if (i >= 0) return list[i];
  }
  for (const cn of prefs.rootCommonName) {
    const i = issuers.findIndex((names) => names.length > 0 && names[names.length - 1] === cn);
    if (i >= 0) return list[i];
  }
  logger.warn("did not find a chain matching preferred_chains; using the first", {
    chains: list.length,
  });
  return list[0];
}

/**
 * `dns.providers.challtestsrv`: TXT records set through the HTTP management API of
 * `pebble-challtestsrv` (Let's Encrypt's challenge test server, the DNS server that Pebble
 * validates against). It is a real provider — the records it sets are answered by that DNS
 * server, so DNS-01 challenges of a Pebble CA are solved end to end — for test and staging
 * setups built on Pebble; it does not manage a public zone.
 *
 * Config: `url`, the management API's base URL (default `http://127.0.0.1:8055`, the
 * server's default). TXT records, and CNAME records (one per name, `/set-cname`, for ZeroSSL's
 * CNAME validation). The server holds one flat namespace: every name is in the root zone `.`
 * for this provider, so no SOA lookup is made. The API can only clear every TXT value of a
 * name at once (`/clear-txt`), so deleting one value clears the name and sets the values this
 * provider added and still keeps again; values set by others on the same name are lost at that
 * moment.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { Decoder } from "../../config/decode.ts";
import { absoluteName, type DnsProvider, type DnsRecord, relativeName } from "./provider.ts";

/** challtestsrv's default management address. */
export const CHALLTESTSRV_DEFAULT_URL = "http://127.0.0.1:8055";

/** The provider for one challtestsrv. */
export class ChalltestsrvDnsProvider implements DnsProvider {
  /** Management API base URL (no trailing slash). */
  readonly url: string;
  /** TXT values set by this provider, by absolute name. */
  readonly #values = new Map<string, DnsRecord[]>();

  /** Creates a provider for the management API at `url`. */
  constructor(url: string = CHALLTESTSRV_DEFAULT_URL) {
    this.url = url.replace(/\/+$/, "");
  }

  /** Every name is in the server's one namespace. */
  zoneOf(): string {
    return ".";
  }

  async #post(path: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<void> {
    let r: Response;
    try {
      r = await fetch(`${this.url}${path}`, {
        method: "POST",
        body: JSON.stringify(body),
        signal,
      });
    } catch (e) {
      throw new Error(`challtestsrv at ${this.url}: ${path}: ${(e as Error).message}`);
    }
    const text = await r.text();
    if (!r.ok) {
      throw new Error(`challtestsrv at ${this.url}: ${path} answered ${r.status} ${text.trim()}`);
    }
  }

  #check(records: DnsRecord[]): void {
    for (const r of records) {
      if (r.type.toUpperCase() !== "TXT" && r.type.toUpperCase() !== "CNAME") {
        throw new Error(`challtestsrv provider: only TXT and CNAME records, got ${r.type}`);
      }
    }
  }

  /** CNAME records this provider set, by absolute name. */
  readonly #cnames = new Map<string, DnsRecord>();

  async #appendCname(zone: string, r: DnsRecord, signal?: AbortSignal): Promise<DnsRecord> {
    const host = absoluteName(r.name, zone);
    await this.#post("/set-cname", { host, target: r.data }, signal);
    const rec = { ...r, type: "CNAME", name: relativeName(host, zone) };
    this.#cnames.set(host, rec);
    return rec;
  }

  async #deleteCname(zone: string, r: DnsRecord, signal?: AbortSignal): Promise<boolean> {
    const host = absoluteName(r.name, zone);
    const had = this.#cnames.get(host);
    if (!had || had.data !== r.data) return false;
    await this.#post("/clear-cname", { host }, signal);
    this.#cnames.delete(host);
    return true;
  }

  /** Sets TXT values (added to the values the name already has) and CNAME records. */
  async appendRecords(
    zone: string,
    records: DnsRecord[],
    signal?: AbortSignal,
  ): Promise<DnsRecord[]> {
    this.#check(records);
    const out: DnsRecord[] = [];
    for (const r of records) {
      if (r.type.toUpperCase() === "CNAME") {
        out.push(await this.#appendCname(zone, r, signal));
        continue;
      }
      const host = absoluteName(r.name, zone);
      await this.#post("/set-txt", { host, value: r.data }, signal);
      const list = this.#values.get(host) ?? [];
      const rec = { ...r, type: "TXT", name: relativeName(host, zone) };
      list.push(rec);
      this.#values.set(host, list);
      out.push(rec);
    }
    return out;
  }

  /** Deletes TXT values and CNAME records this provider set (see the module doc). */
  async deleteRecords(
    zone: string,
    records: DnsRecord[],
    signal?: AbortSignal,
  ): Promise<DnsRecord[]> {
    this.#check(records);
    const out: DnsRecord[] = [];
    for (const r of records) {
      if (r.type.toUpperCase() === "CNAME") {
        if (await this.#deleteCname(zone, r, signal)) out.push(r);
        continue;
      }
      const host = absoluteName(r.name, zone);
      const list = this.#values.get(host) ?? [];
      const i = list.findIndex((x) => x.data === r.data);
      if (i < 0) continue;
      out.push(...list.splice(i, 1));
      await this.#post("/clear-txt", { host }, signal);
      for (const rest of list) await this.#post("/set-txt", { host, value: rest.data }, signal);
      if (!list.length) this.#values.delete(host);
    }
    return out;
  }

  /** The records this provider set and still keeps (the API cannot list the server's). */
  getRecords(zone: string): Promise<DnsRecord[]> {
    const out: DnsRecord[] = [];
    for (const [host, list] of this.#values) {
      for (const r of list) out.push({ ...r, name: relativeName(host, zone) });
    }
    for (const [host, r] of this.#cnames) out.push({ ...r, name: relativeName(host, zone) });
    return Promise.resolve(out);
  }

  /** Replaces every TXT value of each name given with the values given (CNAMEs: replaced). */
  async setRecords(
    zone: string,
    records: DnsRecord[],
    signal?: AbortSignal,
  ): Promise<DnsRecord[]> {
    this.#check(records);
    const txt = records.filter((r) => r.type.toUpperCase() === "TXT");
    for (const host of new Set(txt.map((r) => absoluteName(r.name, zone)))) {
      await this.#post("/clear-txt", { host }, signal);
      this.#values.delete(host);
    }
    return await this.appendRecords(zone, records, signal);
  }

  /** Nothing to release (records are deleted by the challenge that set them). */
  cleanup(): void {}
}

/**
 * Registry entry of `dns.providers.challtestsrv`.
 *
 * @example
 * ```ts
 * import { challtestsrvDnsProviderModule } from "./challtestsrv.ts";
 * challtestsrvDnsProviderModule.id; // "dns.providers.challtestsrv"
 * ```
 */
export const challtestsrvDnsProviderModule: ModuleDefinition<ChalltestsrvDnsProvider> = {
  id: "dns.providers.challtestsrv",
  create(config) {
    const d = new Decoder(config, "dns.providers.challtestsrv").fields(["url"]);
    const url = d.value("url") ?? CHALLTESTSRV_DEFAULT_URL;
    let u: URL | undefined;
    try {
      u = typeof url === "string" ? new URL(url) : undefined;
    } catch { /* refused below */ }
    if (!u || (u.protocol !== "http:" && u.protocol !== "https:")) {
      d.failAt(
        "url",
        `must be the http(s) URL of pebble-challtestsrv's management API, got ${
          JSON.stringify(url)
        }`,
      );
    }
    return new ChalltestsrvDnsProvider(url as string);
  },
};

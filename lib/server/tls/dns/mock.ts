/**
 * `dns.providers.mock` (as in Caddy's test build): a provider that keeps records in this
 * process's memory and changes no DNS server. It makes configs that name a DNS provider
 * loadable and checkable (`gatehouse validate`, tests of the config), but it **cannot solve a
 * real DNS-01 challenge**: no resolver ever sees its records. Config: `argument` (any string,
 * kept for tests), nothing else.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { Decoder } from "../../config/decode.ts";
import { absoluteFqdn, type DnsProvider, type DnsRecord } from "./provider.ts";

const same = (a: DnsRecord, b: DnsRecord) =>
  a.name.toLowerCase() === b.name.toLowerCase() && a.type.toUpperCase() === b.type.toUpperCase() &&
  a.data === b.data;

/** The in-memory provider. */
export class MockDnsProvider implements DnsProvider {
  /** `argument` from the config. */
  readonly argument: string;
  readonly #zones = new Map<string, DnsRecord[]>();

  /** Creates a provider with its `argument`. */
  constructor(argument = "") {
    this.argument = argument;
  }

  #zone(zone: string): DnsRecord[] {
    const z = absoluteFqdn(zone);
    let list = this.#zones.get(z);
    if (!list) this.#zones.set(z, list = []);
    return list;
  }

  /** Adds the records (kept in memory only). */
  appendRecords(zone: string, records: DnsRecord[]): Promise<DnsRecord[]> {
    const list = this.#zone(zone);
    const added = records.map((r) => ({ ...r, type: r.type.toUpperCase() }));
    list.push(...added);
    return Promise.resolve(added);
  }

  /** Deletes the records equal in name, type and data. */
  deleteRecords(zone: string, records: DnsRecord[]): Promise<DnsRecord[]> {
    const list = this.#zone(zone);
    const deleted: DnsRecord[] = [];
    for (const r of records) {
      const i = list.findIndex((x) => same(x, r));
      if (i >= 0) deleted.push(...list.splice(i, 1));
    }
    return Promise.resolve(deleted);
  }

  /** The records of the zone. */
  getRecords(zone: string): Promise<DnsRecord[]> {
    return Promise.resolve(this.#zone(zone).map((r) => ({ ...r })));
  }

  /** Replaces the records of each (name, type) given. */
  setRecords(zone: string, records: DnsRecord[]): Promise<DnsRecord[]> {
    const list = this.#zone(zone);
    const keys = new Set(records.map((r) => `${r.name.toLowerCase()}|${r.type.toUpperCase()}`));
    const kept = list.filter((r) => !keys.has(`${r.name.toLowerCase()}|${r.type}`));
    list.splice(0, list.length, ...kept);
    return this.appendRecords(zone, records);
  }

  /** Nothing to release. */
  cleanup(): void {}
}

/**
 * Registry entry of `dns.providers.mock`.
 *
 * @example
 * ```ts
 * import { mockDnsProviderModule } from "./mock.ts";
 * mockDnsProviderModule.id; // "dns.providers.mock"
 * ```
 */
export const mockDnsProviderModule: ModuleDefinition<MockDnsProvider> = {
  id: "dns.providers.mock",
  create(config) {
    const d = new Decoder(config, "dns.providers.mock").fields(["argument"]);
    const argument = d.value("argument");
    if (argument !== undefined && typeof argument !== "string") {
      d.failAt("argument", "must be a string");
    }
    return new MockDnsProvider(argument as string | undefined);
  },
};

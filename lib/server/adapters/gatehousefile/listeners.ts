/**
 * From site blocks to servers: each site address (with `bind`, `default_bind`, the http and
 * https ports) gives listener addresses; keys of a block that share a listener stay together;
 * listeners serving identical lists of sites become one server (Caddy's map/reduce of
 * `mapAddressToProtocolToServerBlocks` and `consolidateAddrMappings`).
 *
 * @module
 */
import {
  DEFAULT_HTTP_PORT,
  DEFAULT_HTTPS_PORT,
  normalizeSiteAddress,
  parseSiteAddress,
  type SiteAddress,
  siteAddressString,
} from "./address.ts";
import { siteError } from "../../caddyfile/dispenser.ts";
import type { Token } from "../../caddyfile/lexer.ts";
import {
  formatNetAddr,
  joinNetworkAddress,
  parseNetAddr,
  splitNetworkAddress,
} from "../../caddyfile/netaddr.ts";
import type { ServerBlock } from "../../caddyfile/parser.ts";
import type { ConfigValue } from "../../caddyfile/types.ts";

/** A site block with the config values its directives produced, by class. */
export interface SiteBlock {
  /** The parsed block (for a listener: only the keys served there). */
  block: ServerBlock;
  /** Config values by class (`route`, `bind`, `tls.*`, ...); shared by every copy of a block. */
  pile: Map<string, ConfigValue[]>;
  /** Parsed and normalized keys. */
  parsedKeys: SiteAddress[];
}

/** Listen addresses with the protocols to serve on each. */
export interface BindValue {
  /** Listen addresses ("" for all interfaces). */
  addresses: string[];
  /** Protocols (`h1`, `h2`, `h2c`, `h3`), empty for the default. */
  protocols: string[];
}

/** A server to be: listener addresses (each with protocols) and the sites they serve. */
export interface Pairing {
  /** Listen addresses with their protocols ("" = default). */
  listeners: { address: string; protocols: string[] }[];
  /** The site blocks, in order. */
  blocks: SiteBlock[];
}

/** The http and https ports in effect (global options or the defaults). */
export function ports(options: Map<string, unknown>): { http: string; https: string } {
  const hp = options.get("http_port"), hsp = options.get("https_port");
  return {
    http: String(typeof hp === "number" ? hp : DEFAULT_HTTP_PORT),
    https: String(typeof hsp === "number" ? hsp : DEFAULT_HTTPS_PORT),
  };
}

/** The listener addresses (with protocols) one site address of a block is served on. */
function listenersFor(
  sb: SiteBlock,
  addr: SiteAddress,
  options: Map<string, unknown>,
): Map<string, Set<string>> {
  switch (addr.scheme) {
    case "wss":
      throw new Error("the scheme wss:// is only supported in browsers; use https:// instead");
    case "ws":
      throw new Error("the scheme ws:// is only supported in browsers; use http:// instead");
    case "https":
    case "http":
    case "":
      break;
    default:
      throw new Error(`unsupported URL scheme ${addr.scheme}://`);
  }
  const { http, https } = ports(options);
  let port = https;
  if (addr.port !== "") port = addr.port;
  else if (addr.scheme === "http") port = http;
  if ((addr.scheme === "http" && port === https) || (addr.scheme === "https" && port === http)) {
    throw new Error(`[${siteAddressString(addr)}] scheme and port violate convention`);
  }
  let binds = (sb.pile.get("bind") ?? []).map((v) => v.value as BindValue);
  if (binds.length === 0) {
    const defaults = options.get("default_bind") as ConfigValue[] | undefined;
    binds = defaults
      ? defaults.map((v) => v.value as BindValue)
      : [{ addresses: [""], protocols: [] }];
  }
  const out = new Map<string, Set<string>>();
  for (const b of binds) {
    for (const lnAddr of b.addresses) {
      let netw: string, host: string;
      try {
        [netw, host] = splitNetworkAddress(lnAddr);
      } catch (e) {
        throw new Error(`splitting listener address: ${(e as Error).message}`);
      }
      let key: string;
      try {
        key = formatNetAddr(parseNetAddr(joinNetworkAddress(netw, host, port)));
      } catch (e) {
        throw new Error(`parsing network address: ${(e as Error).message}`);
      }
      // (Caddy checks the site address here, so an address listed twice loses its protocols)
      if (!out.has(siteAddressString(addr))) out.set(key, new Set());
      for (const p of b.protocols) out.get(key)!.add(p);
    }
  }
  return out;
}

/** Maps listener address → protocol → the site blocks (with only the keys served there). */
export function mapAddresses(
  blocks: SiteBlock[],
  options: Map<string, unknown>,
): Map<string, Map<string, SiteBlock[]>> {
  const result = new Map<string, Map<string, SiteBlock[]>>();
  blocks.forEach((sb, i) => {
    const byAddr = new Map<string, Map<string, { key: Token; parsed: SiteAddress }[]>>();
    sb.block.keys.forEach((key, j) => {
      let parsed: SiteAddress;
      try {
        parsed = normalizeSiteAddress(parseSiteAddress(key.text));
      } catch (e) {
        throw siteError(key, `parsing key: ${(e as Error).message}`);
      }
      let listeners: Map<string, Set<string>>;
      try {
        listeners = listenersFor(sb, parsed, options);
      } catch (e) {
        throw siteError(
          key,
          `server block ${i}, key ${j} (${key.text}): determining listener address: ${
            (e as Error).message
          }`,
        );
      }
      for (const [addr, protocols] of listeners) {
        let byProt = byAddr.get(addr);
        if (!byProt) byAddr.set(addr, byProt = new Map());
        if (protocols.size === 0) protocols.add("");
        for (const p of protocols) {
          if (!byProt.has(p)) byProt.set(p, []);
          byProt.get(p)!.push({ key, parsed });
        }
      }
    });
    for (const addr of [...byAddr.keys()].sort()) {
      const byProt = byAddr.get(addr)!;
      let target = result.get(addr);
      if (!target) result.set(addr, target = new Map());
      for (const prot of [...byProt.keys()].sort()) {
        const kps = byProt.get(prot)!;
        if (!target.has(prot)) target.set(prot, []);
        target.get(prot)!.push({
          block: {
            keys: kps.map((k) => k.key),
            segments: sb.block.segments,
            hasBraces: false,
            isNamedRoute: false,
          },
          pile: sb.pile,
          parsedKeys: kps.map((k) => k.parsed),
        });
      }
    }
  });
  return result;
}

function sameBlocks(a: SiteBlock[], b: SiteBlock[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((x, i) => {
    const y = b[i];
    return x.pile === y.pile && x.block.segments === y.block.segments &&
      x.block.keys.length === y.block.keys.length &&
      x.block.keys.every((k, j) => k === y.block.keys[j]);
  });
}

/** Groups listeners that serve identical site lists into one pairing each (one server). */
export function consolidateAddresses(
  mapping: Map<string, Map<string, SiteBlock[]>>,
): Pairing[] {
  const out: Pairing[] = [];
  for (const addr of [...mapping.keys()].sort()) {
    const byProt = mapping.get(addr)!;
    for (const prot of [...byProt.keys()].sort()) {
      const blocks = byProt.get(prot); // may have been merged into an earlier pairing
      const listeners = new Map<string, Set<string>>();
      for (const [otherAddr, otherByProt] of mapping) {
        for (const [otherProt, otherBlocks] of [...otherByProt]) {
          if (
            (addr === otherAddr && prot === otherProt) ||
            (blocks !== undefined && sameBlocks(blocks, otherBlocks))
          ) {
            if (!listeners.has(otherAddr)) listeners.set(otherAddr, new Set());
            listeners.get(otherAddr)!.add(otherProt);
            otherByProt.delete(otherProt);
          }
        }
      }
      out.push({
        listeners: [...listeners.keys()].sort().map((address) => ({
          address,
          protocols: [...listeners.get(address)!].sort(),
        })),
        blocks: blocks ?? [],
      });
    }
  }
  return out;
}

/** Non-empty hosts of a block's keys (none when a key has no host, unless `loggerMode`). */
export function hostsFromKeys(sb: SiteBlock, loggerMode: boolean): string[] {
  const hosts = new Set<string>();
  for (const a of sb.parsedKeys) {
    if (a.host === "") {
      if (!loggerMode) return [];
      continue;
    }
    if (
      loggerMode && a.port !== "" && a.port !== String(DEFAULT_HTTP_PORT) &&
      a.port !== String(DEFAULT_HTTPS_PORT)
    ) hosts.add(a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`);
    else hosts.add(a.host);
  }
  return [...hosts];
}

/** Hosts of keys that are not plain HTTP. */
export function hostsFromKeysNotHTTP(sb: SiteBlock, httpPort: string): string[] {
  const hosts = new Set<string>();
  for (const a of sb.parsedKeys) {
    if (a.host !== "" && a.scheme !== "http" && a.port !== httpPort) hosts.add(a.host);
  }
  return [...hosts];
}

/** True when a key of the block has no host (serves every host). */
export function hasHostCatchAllKey(sb: SiteBlock): boolean {
  return sb.parsedKeys.some((a) => a.host === "");
}

/** True when every key of the block is `http://`. */
export function isAllHTTP(sb: SiteBlock): boolean {
  return !sb.parsedKeys.some((a) => a.scheme !== "http");
}

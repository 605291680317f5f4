/**
 * Listen addresses of `http` servers: Caddy's forms expanded to one address per port, with
 * `{env.*}` placeholders replaced. `fd/N` names a listening socket the process inherited
 * (open as descriptor N, e.g. from systemd socket activation): it is served by the node listener
 * engine (`node:net` adopts a descriptor, `Deno.serve` cannot), chosen automatically.
 * `fdgram/N` names an inherited UDP socket: it serves HTTP/3 only (the `h3` of its protocols),
 * on a QUIC endpoint that takes the socket over (see `listeners/h3/inherited.ts`).
 *
 * @module
 */
import { ConfigError } from "../config/error.ts";

/** One expanded listen address. */
export interface ListenAddress {
  /** `tcp`, `unix`, `fd` (an inherited listening socket) or `fdgram` (an inherited UDP socket). */
  network: "tcp" | "unix" | "fd" | "fdgram";
  /** Address in the listener pool's form: `host:port`, `unix//path`, `fd/N` or `fdgram/N`. */
  address: string;
}

/**
 * Expands a Caddy listen address (`:8080`, `127.0.0.1:8000-8003`, `tcp/host:80`,
 * `unix//run/sock`, `fd/3`) into one address per port.
 *
 * @example
 * ```ts
 * import { expandListenAddress } from "./listen_address.ts";
 * expandListenAddress("127.0.0.1:8000-8001", 80).length; // 2
 * ```
 */
export function expandListenAddress(input: string, defaultPort: number): ListenAddress[] {
  let network = "tcp";
  let rest = input.trim().replace(/\{env\.([^{}]+)\}/g, (_, name) => Deno.env.get(name) ?? "");
  const slash = rest.indexOf("/");
  if (slash >= 0 && /^[a-z0-9]+$/.test(rest.slice(0, slash))) {
    network = rest.slice(0, slash);
    rest = rest.slice(slash + 1);
  }
  if (network === "unix" || network === "unixgram" || network === "unixpacket") {
    return [{ network: "unix", address: `unix/${rest}` }];
  }
  if (network === "fd" || network === "fdgram") {
    // the number is checked once every address is expanded (checkListenAddresses)
    return [{ network, address: `${network}/${/^\d{1,9}$/.test(rest) ? Number(rest) : rest}` }];
  }
  if (!["tcp", "tcp4", "tcp6"].includes(network)) {
    throw new ConfigError("invalid_address", `unsupported network in listen address: ${input}`);
  }
  let host = rest;
  let ports = "";
  const m = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(rest);
  if (m) {
    host = m[1];
    ports = m[2] ?? "";
  }
  if (!ports) ports = String(defaultPort);
  const range = /^(\d+)(?:-(\d+))?$/.exec(ports);
  if (!range) {
    throw new ConfigError("invalid_address", `invalid port in listen address: ${input}`);
  }
  const start = Number(range[1]);
  const end = range[2] ? Number(range[2]) : start;
  if (end < start || end > 65535) {
    throw new ConfigError("invalid_address", `invalid port range: ${input}`);
  }
  const out: ListenAddress[] = [];
  for (let p = start; p <= end; p++) out.push({ network: "tcp", address: `${host}:${p}` });
  return out;
}

/**
 * Checks what expansion leaves for later: an `fd/` or `fdgram/` address must name a descriptor
 * number. Called once every address of a server is expanded.
 *
 * @example
 * ```ts
 * import { checkListenAddresses, expandListenAddress } from "./listen_address.ts";
 * checkListenAddresses(expandListenAddress("fd/3", 80), ["fd/3"]);
 * ```
 */
export function checkListenAddresses(addresses: ListenAddress[], inputs: string[]): void {
  for (const [i, a] of addresses.entries()) {
    if (a.network === "fd" && !/^fd\/\d{1,9}$/.test(a.address)) {
      throw new ConfigError(
        "invalid_address",
        `listen address ${inputs[i] ?? a.address}: fd/ takes the number of an inherited ` +
          `listening socket, got ${JSON.stringify(a.address.slice(3))}`,
      );
    }
    if (a.network === "fdgram" && !/^fdgram\/\d{1,9}$/.test(a.address)) {
      throw new ConfigError(
        "invalid_address",
        `listen address ${inputs[i] ?? a.address}: fdgram/ takes the number of an inherited ` +
          `UDP socket, got ${JSON.stringify(a.address.slice(7))}`,
      );
    }
  }
}

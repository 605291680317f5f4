/**
 * Real DNS servers on loopback for the dynamic upstream tests: pebble-challtestsrv (A/AAAA
 * records set through its management API) and, for SRV records, which that build cannot
 * serve, a dns2 UDP server whose records the test changes.
 */
import dns2 from "dns2";
import { freePort } from "../http/harness.ts";

export const CHALLTESTSRV = "/usr/bin/pebble-challtestsrv";

export function challtestsrvAvailable(): boolean {
  try {
    return Deno.statSync(CHALLTESTSRV).isFile;
  } catch {
    return false;
  }
}

/** A UDP port free on 127.0.0.1. */
export function freeUdpPort(): number {
  const l = Deno.listenDatagram({ hostname: "127.0.0.1", port: 0, transport: "udp" });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

export interface ChallTestSrv {
  /** DNS port on 127.0.0.1. */
  dnsPort: number;
  /** Answers A queries for `host` with `ips` (replacing earlier ones). */
  setA(host: string, ips: string[]): Promise<void>;
  /** Answers AAAA queries for `host` with `ips` (replacing earlier ones). */
  setAAAA(host: string, ips: string[]): Promise<void>;
  /** Answers TXT queries for `host` with `value` (empty: no record). */
  setTxt(host: string, value: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts pebble-challtestsrv with its DNS server only, answering nothing by default. */
export async function startChallTestSrv(): Promise<ChallTestSrv> {
  const dnsPort = freeUdpPort();
  const mgmt = freePort();
  const child = new Deno.Command(CHALLTESTSRV, {
    args: [
      "-dns01",
      `127.0.0.1:${dnsPort}`,
      "-management",
      `127.0.0.1:${mgmt}`,
      "-http01",
      "",
      "-https01",
      "",
      "-tlsalpn01",
      "",
      "-defaultIPv4",
      "",
      "-defaultIPv6",
      "",
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const api = async (path: string, body: unknown) => {
    const r = await fetch(`http://127.0.0.1:${mgmt}${path}`, {
      method: "POST",
      body: JSON.stringify(body),
    });
    await r.body?.cancel();
    if (!r.ok) throw new Error(`challtestsrv ${path}: ${r.status}`);
  };
  const until = Date.now() + 10_000;
  while (true) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port: mgmt })).close();
      break;
    } catch {
      if (Date.now() > until) {
        child.kill("SIGKILL");
        await child.status;
        throw new Error("pebble-challtestsrv did not start");
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    dnsPort,
    async setA(host, ips) {
      const fqdn = host.endsWith(".") ? host : host + ".";
      await api("/clear-a", { host: fqdn });
      if (ips.length) await api("/add-a", { host: fqdn, addresses: ips });
    },
    async setAAAA(host, ips) {
      const fqdn = host.endsWith(".") ? host : host + ".";
      await api("/clear-aaaa", { host: fqdn });
      if (ips.length) await api("/add-aaaa", { host: fqdn, addresses: ips });
    },
    async setTxt(host, value) {
      const fqdn = host.endsWith(".") ? host : host + ".";
      if (value) await api("/set-txt", { host: fqdn, value });
      else await api("/clear-txt", { host: fqdn });
    },
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

export interface SrvRecord {
  priority: number;
  weight: number;
  port: number;
  target: string;
}

export interface SrvServer {
  dnsPort: number;
  /** SRV answers by name (no trailing dot); a name not here gets SERVFAIL. */
  records: Map<string, SrvRecord[]>;
  /** Number of SRV queries answered. */
  queries: number;
  stop(): Promise<void>;
}

/** A dns2 UDP server answering SRV queries from `records`. */
export async function startSrvServer(): Promise<SrvServer> {
  const { Packet } = dns2;
  const state: SrvServer = {
    dnsPort: freeUdpPort(),
    records: new Map(),
    queries: 0,
    stop: () => Promise.resolve(),
  };
  const server = dns2.createServer({
    udp: true,
    handle(request, send) {
      const response = Packet.createResponseFromRequest(request);
      const q = request.questions[0];
      const found = q ? state.records.get(q.name.replace(/\.$/, "").toLowerCase()) : undefined;
      if (q && q.type === Packet.TYPE.SRV) state.queries++;
      if (!found) {
        (response.header as { rcode: number }).rcode = 2; // SERVFAIL
      } else {
        for (const r of found) {
          response.answers.push({
            name: q.name,
            type: Packet.TYPE.SRV,
            class: Packet.CLASS.IN,
            ttl: 1,
            ...r,
          } as never);
        }
      }
      send(response);
    },
  });
  await server.listen({ udp: { port: state.dnsPort, address: "127.0.0.1" } });
  state.stop = async () => {
    await server.close();
  };
  return state;
}

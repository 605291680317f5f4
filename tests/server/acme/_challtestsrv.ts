/**
 * pebble-challtestsrv alone (its DNS server answers every name with 127.0.0.1; records are
 * set through its management API), on free loopback ports, for tests that need DNS without
 * Pebble.
 */
import { freePort } from "../fixtures/helpers.ts";

/** A running challtestsrv. */
export interface Challtestsrv {
  /** The DNS server. */
  dns: { ipAddr: string; port: number };
  /** `127.0.0.1:<port>` of the DNS server (for `resolvers`). */
  dnsAddress: string;
  /** The management API's base URL. */
  management: string;
  /** Makes DNS fail (SERVFAIL) for `name`, or answer again. */
  setServfail(name: string, fail: boolean): Promise<void>;
  /** Stops it. */
  stop(): Promise<void>;
}

/** Starts challtestsrv (tries other ports when one was taken meanwhile). */
export async function startChalltestsrv(): Promise<Challtestsrv> {
  for (let i = 0;; i++) {
    const [dns, mgmt] = [freePort(), freePort()];
    const child = new Deno.Command("pebble-challtestsrv", {
      args: [
        "-dns01",
        `127.0.0.1:${dns}`,
        "-http01",
        "",
        "-https01",
        "",
        "-tlsalpn01",
        "",
        "-management",
        `127.0.0.1:${mgmt}`,
        "-defaultIPv4",
        "127.0.0.1",
        "-defaultIPv6",
        "",
      ],
      stdout: "null",
      stderr: "null",
    }).spawn();
    const management = `http://127.0.0.1:${mgmt}`;
    const stop = async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
    };
    const deadline = Date.now() + 10_000;
    let up = false;
    while (Date.now() < deadline) {
      const r = await fetch(`${management}/`).catch(() => null);
      await r?.body?.cancel();
      const a = r &&
        await Deno.resolveDns("up.test", "A", { nameServer: { ipAddr: "127.0.0.1", port: dns } })
          .catch(() => null);
      if (a?.length) {
        up = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!up) {
      await stop();
      if (i < 2) continue;
      throw new Error("pebble-challtestsrv did not start");
    }
    const post = async (path: string, host: string) => {
      const r = await fetch(`${management}${path}`, {
        method: "POST",
        body: JSON.stringify({ host: host.endsWith(".") ? host : `${host}.` }),
      });
      await r.body?.cancel();
      if (!r.ok) throw new Error(`challtestsrv ${path}: ${r.status}`);
    };
    return {
      dns: { ipAddr: "127.0.0.1", port: dns },
      dnsAddress: `127.0.0.1:${dns}`,
      management,
      setServfail: (name, fail) => post(fail ? "/set-servfail" : "/clear-servfail", name),
      stop,
    };
  }
}

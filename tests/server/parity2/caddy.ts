/**
 * Caddy 2.6.2 (Debian's `caddy`) as the oracle: runs a JSON config (admin off) on a free
 * loopback port and stops it afterwards.
 */
import { freePort } from "../http/harness.ts";

/** True when the `caddy` binary runs here. */
export function caddyAvailable(): boolean {
  try {
    return new Deno.Command("caddy", { args: ["version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

export interface RunningCaddy {
  /** `http://127.0.0.1:<port>` of the one server. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Runs Caddy with one server whose routes are given, listening on a free port; `serverExtra`
 * adds server fields, `appsExtra` other apps (a `tls` app with certificates).
 */
export async function startCaddy(
  routes: unknown[],
  serverExtra: Record<string, unknown> = {},
  appsExtra: Record<string, unknown> = {},
): Promise<RunningCaddy> {
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-caddy-" });
  const config = {
    admin: { disabled: true },
    storage: { module: "file_system", root: `${dir}/data` },
    apps: {
      ...appsExtra,
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            routes,
            ...serverExtra,
          },
        },
      },
    },
  };
  await Deno.writeTextFile(`${dir}/caddy.json`, JSON.stringify(config));
  const child = new Deno.Command("caddy", {
    args: ["run", "--config", `${dir}/caddy.json`],
    stdout: "null",
    stderr: "null",
    env: { HOME: dir, XDG_DATA_HOME: `${dir}/data`, XDG_CONFIG_HOME: `${dir}/config` },
  }).spawn();
  const until = Date.now() + 10_000;
  while (true) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      break;
    } catch {
      if (Date.now() > until) {
        child.kill("SIGKILL");
        await child.status;
        throw new Error("caddy did not start");
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

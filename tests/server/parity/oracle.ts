/**
 * Runs one `apps.http` config in Caddy 2.6.2 (the oracle, when installed) beside Gatehouse,
 * so a test can send the same requests to both. Caddy gets its own free loopback ports and
 * admin address; logs go to a temp file.
 */
import { freePort } from "../http/harness.ts";

/** True when the `caddy` binary runs here. */
export function caddyInstalled(): boolean {
  try {
    return new Deno.Command("caddy", { args: ["version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/** A running Caddy. */
export interface Oracle {
  /** Base URL of the first listen address of the first server. */
  url: string;
  /** Its admin API base URL. */
  admin: string;
  stop(): Promise<void>;
}

/**
 * Starts Caddy with `http` as `apps.http` (a `listen` of `127.0.0.1:0` gets a free port) and
 * `extra` top-level sections; resolves once it answers.
 */
export async function startCaddy(
  http: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<Oracle> {
  const cfg = structuredClone(http) as { servers: Record<string, { listen?: string[] }> };
  let url = "";
  for (const s of Object.values(cfg.servers)) {
    s.listen = (s.listen ?? []).map((a) => a.endsWith(":0") ? `127.0.0.1:${freePort()}` : a);
    url ||= `http://${s.listen[0]}`;
  }
  const adminPort = freePort();
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-oracle-" });
  await Deno.writeTextFile(
    `${dir}/caddy.json`,
    JSON.stringify({ admin: { listen: `127.0.0.1:${adminPort}` }, apps: { http: cfg }, ...extra }),
  );
  const child = new Deno.Command("caddy", {
    args: ["run", "--config", `${dir}/caddy.json`],
    stdout: "null",
    stderr: "piped",
    env: { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
  }).spawn();
  const errText = new Response(child.stderr).text();
  const admin = `http://127.0.0.1:${adminPort}`;
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* gone */ }
    await child.status;
    await errText;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const end = Date.now() + 10_000;
  let exited = false;
  child.status.then(() => exited = true);
  for (;;) {
    try {
      await (await fetch(`${admin}/config/`)).body?.cancel();
      break;
    } catch {
      if (exited || Date.now() > end) {
        await stop();
        throw new Error(`caddy did not start: ${await errText}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { url, admin, stop };
}

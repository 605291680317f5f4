/**
 * Gatehouse in this process for the node engine's HTTP/2 tests: a whole config (`apps`), every
 * log as JSON lines in a temp file, reloads, and an upstream that echoes what it gets.
 */
import { startServer } from "../../../lib/server/embed.ts";
import type { LogRecord } from "../http/harness.ts";

/** A running Gatehouse. */
export interface Running {
  /** Access log records (`handled request`). */
  access(): Promise<Record<string, unknown>[]>;
  /** Waits until the access log has a record for `uri`. */
  waitAccess(uri: string): Promise<Record<string, unknown>>;
  /** Loads new apps (a reload). */
  load(apps: Record<string, unknown>): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * Gives every server without `automatic_https` one with `disable_redirects`, so that a TLS
 * server does not also open the HTTP->HTTPS redirect listener on port 80 (other tests use it).
 */
function noRedirects(apps: Record<string, unknown>): Record<string, unknown> {
  const http = apps.http as { servers?: Record<string, Record<string, unknown>> } | undefined;
  if (!http?.servers) return apps;
  const servers = Object.fromEntries(
    Object.entries(http.servers).map((
      [k, v],
    ) => [k, { automatic_https: { disable_redirects: true }, ...v }]),
  );
  return { ...apps, http: { ...http, servers } };
}

/** Starts Gatehouse with `apps` (admin off; no redirect listener on port 80, see above). */
export async function gatehouse(
  apps: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<Running> {
  const logFile = await Deno.makeTempFile({ prefix: "gatehouse-h2-log-", suffix: ".jsonl" });
  const full = (a: Record<string, unknown>) => ({
    admin: { disabled: true },
    logging: {
      logs: {
        default: {
          writer: { output: "file", filename: logFile, roll_disabled: true },
          encoder: { format: "json" },
          level: "INFO",
        },
      },
    },
    apps: noRedirects(a),
    ...extra,
  });
  const server = await startServer({ config: full(apps) });
  const access = async () =>
    (await Deno.readTextFile(logFile).catch(() => "")).split("\n").filter(Boolean)
      .map((l) => JSON.parse(l) as LogRecord)
      .filter((r) => r.msg === "handled request")
      .map((r) => r.request as Record<string, unknown>);
  return {
    access,
    async waitAccess(uri) {
      const end = Date.now() + 5000;
      while (true) {
        const found = (await access()).find((r) => r.uri === uri);
        if (found) return found;
        if (Date.now() > end) throw new Error(`no access log record for ${uri}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    load: (a) => server.load(full(a)),
    async stop() {
      await server.stop();
      await Deno.remove(logFile).catch(() => {});
    },
  };
}

/**
 * An upstream on Deno.serve: `/echo` answers `len=<n> sha=<sha256 hex>` of the request body in
 * several chunks, `/big?n=` streams n KiB, `/slow?ms=` answers after that long.
 */
export function echoUpstream(): { dial: string; close(): Promise<void> } {
  const enc = new TextEncoder();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/slow") {
      await new Promise((r) => setTimeout(r, Number(url.searchParams.get("ms") ?? 1000)));
      return new Response("slow done");
    }
    if (url.pathname === "/big") {
      const n = Number(url.searchParams.get("n") ?? 1);
      let i = 0;
      return new Response(
        new ReadableStream({
          pull(c) {
            if (i++ >= n) return c.close();
            c.enqueue(new Uint8Array(1024).fill(97));
          },
        }),
      );
    }
    const body = new Uint8Array(await req.arrayBuffer());
    const sha = Array.from(
      new Uint8Array(await crypto.subtle.digest("SHA-256", body)),
      (b) => b.toString(16).padStart(2, "0"),
    ).join("");
    return new Response(
      new ReadableStream({
        start(c) {
          c.enqueue(enc.encode(`len=${body.length} `));
          c.enqueue(enc.encode(`sha=${sha}`));
          c.close();
        },
      }),
      { headers: { "x-method": req.method } },
    );
  });
  return {
    dial: `127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    close: () => server.shutdown(),
  };
}

/**
 * Log writers `caddy.logging.writers.{stdout,stderr,discard,net}` (the file writer has its
 * own file).
 *
 * @module
 */
import type { ModuleDefinition } from "../module/mod.ts";
import { Decoder } from "../config/decode.ts";
import type { LogWriter } from "./entry.ts";
import { durationMs } from "../config/duration.ts";
import { parseNetworkAddress } from "../net/address.ts";

function stdWriter(stream: typeof Deno.stdout | typeof Deno.stderr): LogWriter {
  return {
    isTerminal: stream.isTerminal(),
    write(bytes) {
      try {
        let off = 0;
        while (off < bytes.length) off += stream.writeSync(bytes.subarray(off));
      } catch {
        // a closed pipe must not take the server down
      }
    },
  };
}

/** Writer to standard output. */
export function stdoutWriter(): LogWriter {
  return stdWriter(Deno.stdout);
}

/** Writer to standard error (the default). */
export function stderrWriter(): LogWriter {
  return stdWriter(Deno.stderr);
}

/** Writer that drops everything. */
export function discardWriter(): LogWriter {
  return { write() {} };
}

/** Options of the network writer (Caddy's field names). */
export interface NetWriterOptions {
  /** Network address, e.g. `localhost:9999`, `tcp/10.0.0.1:514`, `unix//run/log.sock`. */
  address: string;
  /** Dial timeout (Caddy duration). */
  dial_timeout?: string | number;
  /** When true, a failed first dial does not fail the config; writes buffer meanwhile. */
  soft_start?: boolean;
}

/** Writer to a TCP or unix stream socket; reconnects after errors. `validating`: no dial. */
export async function netWriter(o: NetWriterOptions, validating = false): Promise<LogWriter> {
  if (!o.address) throw new Error("net log writer: missing address");
  const addr = parseNetworkAddress(o.address);
  if (addr.network.startsWith("udp")) {
    throw new Error("net log writer: udp is not supported; use tcp or unix");
  }
  const timeout = o.dial_timeout !== undefined
    ? durationMs(o.dial_timeout, "net log writer: dial_timeout")
    : 10_000;
  if (validating) return { write() {} };
  let conn: Deno.Conn | undefined;
  let closed = false;
  let queue: Uint8Array[] = [];
  let pumping: Promise<void> | undefined;
  const dial = async (): Promise<Deno.Conn> => {
    const connect = addr.network === "unix"
      ? Deno.connect({ transport: "unix", path: addr.host })
      : Deno.connect({ hostname: addr.host || "localhost", port: addr.startPort });
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await Promise.race([
        connect,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("dial timeout")), timeout);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    conn = await dial();
  } catch (e) {
    if (!o.soft_start) {
      throw new Error(`net log writer: dialing ${o.address}: ${(e as Error).message}`);
    }
  }
  const pump = async () => {
    while (queue.length && !closed) {
      try {
        conn ??= await dial();
        const batch = queue;
        queue = [];
        for (const b of batch) {
          let off = 0;
          while (off < b.length) off += await conn.write(b.subarray(off));
        }
      } catch {
        try {
          conn?.close();
        } catch { /* already closed */ }
        conn = undefined;
        if (queue.length > 10_000) queue = queue.slice(-10_000);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    pumping = undefined;
  };
  return {
    write(bytes) {
      if (closed) return;
      queue.push(bytes.slice());
      pumping ??= pump();
    },
    async flush() {
      while (pumping) await pumping;
    },
    async cleanup() {
      while (pumping && conn) await pumping;
      closed = true;
      try {
        conn?.close();
      } catch { /* already closed */ }
    },
  };
}

/** The writers to the process's streams and to nowhere. */
export const streamWriterModules: ModuleDefinition<LogWriter>[] = ([
  ["stdout", stdoutWriter],
  ["stderr", stderrWriter],
  ["discard", discardWriter],
] as const).map(([name, make]) => ({
  id: `caddy.logging.writers.${name}`,
  create: (c: Record<string, unknown>) => {
    new Decoder(c, `caddy.logging.writers.${name}`).fields(["output"]);
    return make();
  },
}));

/** `caddy.logging.writers.net`. */
export const netWriterModule: ModuleDefinition<LogWriter> = {
  id: "caddy.logging.writers.net",
  create: (c, ctx) => {
    new Decoder(c, "caddy.logging.writers.net").fields([
      "output",
      "address",
      "dial_timeout",
      "soft_start",
    ]);
    return netWriter(c as unknown as NetWriterOptions, ctx.validating);
  },
};

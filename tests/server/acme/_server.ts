/**
 * Helpers of the server-level ACME tests: an `acme` issuer pointed at a test Pebble, log
 * lines read back from a JSON log file, serial numbers in one form, polling.
 */
import type { Pebble } from "./_pebble.ts";

/** An `acme` issuer config for `pebble` (challenge ports follow the http app by default). */
export function pebbleIssuer(
  pebble: Pebble,
  challenges: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    module: "acme",
    ca: pebble.directory,
    email: "ops@example.com",
    trusted_roots_pem_files: [pebble.tlsRootFile],
    challenges: { "tls-alpn": { alternate_port: pebble.tlsPort }, ...challenges },
  };
}

/** A `logging` config writing JSON lines at INFO to `file`. */
export function fileLogging(file: string): Record<string, unknown> {
  return {
    logs: {
      default: {
        writer: { output: "file", filename: file },
        encoder: { format: "json" },
        level: "INFO",
      },
    },
  };
}

/** The JSON log entries written so far. */
export async function logEntries(file: string): Promise<Record<string, unknown>[]> {
  let text = "";
  try {
    text = await Deno.readTextFile(file);
  } catch {
    return [];
  }
  return text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

/** A serial number as lower-case hex without leading zeros (Pebble's form). */
export function normSerial(s: string): string {
  return s.toLowerCase().replace(/^(00)+/, "").replace(/^0+(?=.)/, "");
}

/** Polls `fn` until it returns a truthy value; throws `what` after `ms`. */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false>,
  ms: number,
  what: string,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Writes Pebble's issuing root to a file in `dir` (for curl --cacert). */
export async function rootFile(pebble: Pebble, dir: string): Promise<string> {
  const f = `${dir}/pebble-root.pem`;
  await Deno.writeTextFile(f, await pebble.issuingRoot());
  return f;
}

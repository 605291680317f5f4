/**
 * The adapters a round trip can use: Caddy 2.6.2's `caddy adapt` (the oracle, as a process)
 * and ours (the registered `gatehousefile` adapter, once the server has one).
 *
 * @module
 */
import "../../../lib/server/standard.ts";
import { getAdapter } from "../../../lib/server/adapter.ts";

/** Adapts Gatehousefile text to JSON. Throws on adapt errors. */
export type AdaptFn = (text: string) => Promise<unknown>;

/** True when `caddy` (2.6.2, the oracle) is installed. */
export function hasCaddy(): boolean {
  try {
    return new Deno.Command("caddy", { args: ["version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/**
 * `caddy adapt` on the text, written as `<dir>/Caddyfile`; the file's path in the output is
 * replaced by `./Caddyfile`, as the corpus runner does.
 */
export const caddyAdapt: AdaptFn = async (text) => {
  const dir = await Deno.makeTempDir({ prefix: "gf-reverse-" });
  try {
    const file = `${dir}/Caddyfile`;
    await Deno.writeTextFile(file, text);
    const out = await new Deno.Command("caddy", {
      args: ["adapt", "--config", file, "--adapter", "caddyfile"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    if (!out.success) {
      const err = dec.decode(out.stderr).split("\n").filter((l) => /rror/.test(l)).join(" ");
      throw new Error(err || "caddy adapt failed");
    }
    return JSON.parse(dec.decode(out.stdout).replaceAll(file, "./Caddyfile"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
};

/** Our `gatehousefile` adapter, when the server registers one. */
export function ourAdapt(): AdaptFn | undefined {
  const a = getAdapter("gatehousefile");
  if (!a) return undefined;
  return async (text) => (await a.adapt(text, { filename: "./Caddyfile" })).result;
}

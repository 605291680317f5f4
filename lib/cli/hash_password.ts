/**
 * `gatehouse hash-password`: hashes a password as Caddy 2.6.2 does and prints what `http_basic`
 * accounts take: with bcrypt (the default; cost 14) the raw `$2b$14$...` hash, with scrypt
 * (deprecated, as in Caddy; N=32768, r=8, p=1, 32-byte key, salted with the bytes of `--salt`)
 * the base64 key. Without `--plaintext` it prompts twice on the terminal with echo off, or
 * reads one line from a pipe.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { ExitCode } from "./command.ts";
import { UsageError } from "./usage_error.ts";
import {
  bcryptHash,
  SCRYPT_DEFAULTS,
  scryptKey,
  toBase64,
} from "../server/http/handlers/authentication/hashes.ts";

/** Algorithms `hash-password` offers. */
export const HASH_ALGORITHMS: readonly string[] = ["bcrypt", "scrypt"];

/**
 * Hashes a password as `hash-password` prints it: the bcrypt hash text, or for scrypt the
 * base64 key of the password salted with `salt`'s bytes.
 *
 * @example
 * ```ts ignore
 * import { hashPassword } from "./hash_password.ts";
 * await hashPassword("hunter2"); // "$2b$14$..."
 * await hashPassword("hunter2", { algorithm: "scrypt", salt: "saltsalt" });
 * ```
 */
export async function hashPassword(
  plaintext: string,
  options: { algorithm?: string; salt?: string } = {},
): Promise<string> {
  const algorithm = options.algorithm ?? "bcrypt";
  if (algorithm === "bcrypt") return await bcryptHash(plaintext);
  if (algorithm === "scrypt") {
    const salt = new TextEncoder().encode(options.salt ?? "");
    return toBase64(await scryptKey(plaintext, salt, SCRYPT_DEFAULTS));
  }
  throw new UsageError(`unrecognized hash algorithm: ${algorithm}`);
}

async function readLine(prompt: string, echo: boolean): Promise<string> {
  const enc = new TextEncoder();
  if (Deno.stdin.isTerminal()) {
    await Deno.stderr.write(enc.encode(prompt));
    if (!echo) Deno.stdin.setRaw(true);
    const bytes: number[] = [];
    const buf = new Uint8Array(1);
    try {
      while (true) {
        const n = await Deno.stdin.read(buf);
        if (n === null || buf[0] === 13 || buf[0] === 10) break;
        if (buf[0] === 3) throw new UsageError("hash-password: interrupted");
        if (buf[0] === 127 || buf[0] === 8) bytes.pop();
        else bytes.push(buf[0]);
      }
    } finally {
      if (!echo) Deno.stdin.setRaw(false);
      await Deno.stderr.write(enc.encode("\n"));
    }
    return new TextDecoder().decode(new Uint8Array(bytes));
  }
  const text = await new Response(Deno.stdin.readable).text();
  return text.replace(/\r?\n$/, "").split(/\r?\n/)[0] ?? "";
}

/** `hash-password`. */
export const hashPasswordCommand: Command = {
  name: "hash-password",
  usage: "[--algorithm <name>] [--salt <string>] [--plaintext <password>]",
  short: "Hashes a password and writes the hash",
  long: [
    "Hashes --plaintext (or a password read from the terminal, asked twice, or one line from",
    "stdin) and writes the hash, ready for the password of an http_basic account.",
    "",
    "--algorithm may be bcrypt (the default; prints the $2b$ hash) or scrypt (prints the",
    "base64 key; the account's salt is the base64 of --salt). scrypt is deprecated: use bcrypt.",
  ].join("\n"),
  flags: [
    {
      name: "plaintext",
      short: "p",
      type: "string",
      value: "<password>",
      help: "The plaintext password",
    },
    {
      name: "algorithm",
      short: "a",
      type: "string",
      value: "<name>",
      help: "Name of the hash algorithm (bcrypt or scrypt)",
      default: "bcrypt",
    },
    {
      name: "salt",
      type: "string",
      value: "<string>",
      help: "The password salt (scrypt)",
    },
  ],
  async run({ flags }) {
    const algorithm = String(flags.algorithm ?? "bcrypt");
    if (!HASH_ALGORITHMS.includes(algorithm)) {
      throw new UsageError(`hash-password: unrecognized hash algorithm: ${algorithm}`);
    }
    let plaintext = typeof flags.plaintext === "string" ? flags.plaintext : undefined;
    if (plaintext === undefined) {
      plaintext = await readLine("Enter password: ", false);
      if (Deno.stdin.isTerminal()) {
        const again = await readLine("Confirm password: ", false);
        if (again !== plaintext) {
          console.error("hash-password: passwords do not match");
          return ExitCode.Failure;
        }
      }
    }
    if (!plaintext) {
      console.error("hash-password: plaintext is required");
      return ExitCode.Failure;
    }
    const salt = typeof flags.salt === "string" ? flags.salt : undefined;
    console.log(await hashPassword(plaintext, { algorithm, salt }));
    return ExitCode.Success;
  },
};

/**
 * `gatehouse hash-password`: hashes a password with bcrypt (cost 14, as Caddy) and prints it
 * base64-encoded, the form `http_basic` accounts take (raw `$2a$` hashes work too). Without
 * `--plaintext` it prompts twice on the terminal with echo off, or reads one line from a
 * pipe.
 *
 * @module
 */
import bcrypt from "bcryptjs";
import type { Command } from "./command.ts";
import { ExitCode } from "./command.ts";
import { UsageError } from "./usage_error.ts";

/** Hashes a password as `hash-password` prints it (base64 of the bcrypt hash). */
export async function hashPassword(plaintext: string, cost = 14): Promise<string> {
  const hash = await bcrypt.hash(plaintext, cost);
  return btoa(hash);
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
  usage: "[--plaintext <password>] [--algorithm <name>]",
  short: "Hashes a password and writes base64",
  long: [
    "Hashes --plaintext (or a password read from the terminal, asked twice, or one line from",
    "stdin) with bcrypt and writes the base64-encoded hash, ready for http_basic accounts.",
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
      help: "Name of the hash algorithm",
      default: "bcrypt",
    },
  ],
  async run({ flags }) {
    const algorithm = String(flags.algorithm ?? "bcrypt");
    if (algorithm !== "bcrypt") {
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
    console.log(await hashPassword(plaintext));
    return ExitCode.Success;
  },
};

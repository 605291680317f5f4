/**
 * Keeps `SIGUSR1` from opening Deno's V8 inspector.
 *
 * Since Deno 2.9.2 the runtime starts its inspector on 127.0.0.1:9229 when a process receives
 * `SIGUSR1` (as Node does), about 500 ms after start, whatever the program's permissions; a
 * signal listener does not stop it. Anyone who may signal the server could then run code as the
 * server. The spec says `SIGUSR1` is ignored, so a server process sets the signal's disposition
 * to "ignore" in the kernel (`signal(SIGUSR1, SIG_IGN)` through FFI): the signal is then
 * discarded before any handler, Deno's included, sees it.
 *
 * Deno installs its process-wide handler for a signal once, when the first listener for it is
 * registered, so {@linkcode ignoreInspectorSignal} registers a listener first (making sure the
 * handler is in place) and then replaces the disposition; it is safe to call again (the server
 * calls it once more after Deno's grace period). Needs the `ffi` permission (`-A` or
 * `--allow-ffi`); without it nothing can stop the runtime and the result says so.
 *
 * {@linkcode guardInspectorSignal} does both steps and warns when the signal stays live: every
 * long-running entry point calls it first (`gatehouse run` and the other server commands,
 * `deno task start`, `deno task mail`, `deno task mail:listen` and `mail:replay`). A program
 * that embeds the server (`startServer` of `admin.ts`) or the mail API decides for its own
 * process: it calls `guardInspectorSignal()` itself when whoever can signal the process must not
 * get a debugger.
 *
 * @module
 */

/** Outcome of {@linkcode ignoreInspectorSignal}. */
export type SignalGuard =
  /** The kernel discards SIGUSR1 for this process. */
  | "ignored"
  /** The `ffi` permission is not granted: SIGUSR1 would open the inspector. */
  | "no_ffi"
  /** Not a Unix with a known C library, or the C library could not be opened. */
  | "unsupported";

const SIGUSR1: Partial<Record<typeof Deno.build.os, number>> = { linux: 10, darwin: 30 };
const LIBC: Partial<Record<typeof Deno.build.os, string[]>> = {
  linux: ["libc.so.6", "libc.so"],
  darwin: ["/usr/lib/libSystem.B.dylib"],
};

const noop = () => {};
let listening = false;

function setIgnored(signo: number, names: string[]): boolean {
  for (const name of names) {
    let lib;
    try {
      lib = Deno.dlopen(name, { signal: { parameters: ["i32", "pointer"], result: "pointer" } });
    } catch {
      continue;
    }
    try {
      lib.symbols.signal(signo, Deno.UnsafePointer.create(1n)); // SIG_IGN == (void (*)(int)) 1
      return true;
    } finally {
      lib.close();
    }
  }
  return false;
}

/** True when /proc says the kernel ignores `signo` for this process (Linux only). */
function kernelIgnores(signo: number): boolean {
  try {
    const status = Deno.readTextFileSync("/proc/self/status");
    const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(status)?.[1];
    return mask !== undefined && ((BigInt(`0x${mask}`) >> BigInt(signo - 1)) & 1n) === 1n;
  } catch {
    return true; // no /proc: trust signal()'s result
  }
}

/**
 * Makes the kernel discard SIGUSR1 for this process (see the module documentation).
 *
 * @example
 * ```ts ignore
 * import { ignoreInspectorSignal } from "./inspector_signal.ts";
 * if (ignoreInspectorSignal() !== "ignored") console.error("SIGUSR1 would open the inspector");
 * ```
 */
export function ignoreInspectorSignal(): SignalGuard {
  const os = Deno.build.os;
  const signo = SIGUSR1[os];
  const libs = LIBC[os];
  if (signo === undefined || libs === undefined) return "unsupported";
  if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return "no_ffi";
  if (!listening) {
    // registers Deno's handler for SIGUSR1 now, so no later registration installs it again
    Deno.addSignalListener("SIGUSR1", noop);
    listening = true;
  }
  if (!setIgnored(signo, libs)) return "unsupported";
  return os !== "linux" || kernelIgnores(signo) ? "ignored" : "unsupported";
}

/** How long after start Deno has armed its SIGUSR1 inspector trigger (it does at ~500 ms). */
export const INSPECTOR_ARMED_MS = 1000;

function warnOnStderr(guard: SignalGuard): void {
  console.error(
    `warning: SIGUSR1 cannot be ignored (${guard}): Deno opens its V8 inspector on ` +
      "127.0.0.1:9229 when this process receives SIGUSR1; run it with -A or --allow-ffi",
  );
}

/**
 * Keeps SIGUSR1 from opening the inspector for the life of the process: ignores it now and
 * once more after Deno armed its trigger ({@linkcode INSPECTOR_ARMED_MS}, on an unref'd timer
 * that never keeps the process alive). `warn` is called when the signal stays live (no `ffi`
 * permission, no known C library); by default a line on stderr. Nothing is reported on
 * Windows, which has no SIGUSR1. Returns a function that cancels the second step.
 *
 * @example
 * ```ts ignore
 * import { guardInspectorSignal } from "./inspector_signal.ts";
 * guardInspectorSignal(); // first thing in a long-running program
 * Deno.serve(() => new Response("hi"));
 * ```
 */
export function guardInspectorSignal(
  warn: (guard: SignalGuard) => void = warnOnStderr,
): () => void {
  const report = (guard: SignalGuard) => {
    if (guard !== "ignored" && Deno.build.os !== "windows") warn(guard);
  };
  const first = ignoreInspectorSignal();
  report(first);
  if (first !== "ignored") return () => {};
  const timer = setTimeout(() => report(ignoreInspectorSignal()), INSPECTOR_ARMED_MS);
  Deno.unrefTimer(timer);
  return () => clearTimeout(timer);
}

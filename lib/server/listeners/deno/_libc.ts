/**
 * The C library functions the listener handover (and the plain-HTTP peek of the deno engine's
 * TLS listeners) call through FFI (Linux only), opened once per process on first use and kept
 * open.
 *
 * @module
 */

/** The functions bound, with their C signatures. */
export const SYMBOLS = {
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  bind: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  connect: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  getsockname: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  getpeername: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  shutdown: { parameters: ["i32", "i32"], result: "i32" },
  send: { parameters: ["i32", "buffer", "usize", "i32"], result: "isize" },
  recv: { parameters: ["i32", "buffer", "usize", "i32"], result: "isize" },
  close: { parameters: ["i32"], result: "i32" },
  setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
  getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
  fstat: { parameters: ["i32", "buffer"], result: "i32", optional: true }, // glibc 2.33+
  __errno_location: { parameters: [], result: "pointer" },
} as const;

/** The bound functions. */
export type Libc = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

/** Why the C library cannot be used. */
export type LibcUnavailable = "not_linux" | "no_ffi" | "no_libc";

let opened: Libc | undefined;

/**
 * The C library, or why it cannot be used here.
 *
 * @example
 * ```ts ignore
 * const c = libc();
 * if (typeof c !== "string") c.close(-1);
 * ```
 */
export function libc(): Libc | LibcUnavailable {
  if (opened) return opened;
  if (Deno.build.os !== "linux") return "not_linux";
  if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return "no_ffi";
  for (const name of ["libc.so.6", "libc.so"]) {
    try {
      opened = Deno.dlopen(name, SYMBOLS).symbols;
      return opened;
    } catch { /* next */ }
  }
  return "no_libc";
}

/** The calling thread's `errno` (read right after the failed call). */
export function errno(c: Libc): number {
  return new Deno.UnsafePointerView(c.__errno_location()!).getInt32();
}

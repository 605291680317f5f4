/**
 * The byte connection the upstream clients read and write (a `Deno.Conn`, or the OpenSSL
 * connection of `openssl_conn.ts` when a TLS upstream needs renegotiation), and writing all of
 * a buffer to one.
 *
 * @module
 */

/** What the client needs of a connection (a `Deno.Conn` has it all). */
export interface ByteConn {
  /** Reads into `p`; null at EOF. */
  read(p: Uint8Array): Promise<number | null>;
  /** Writes some of `p`; the number of bytes written. */
  write(p: Uint8Array): Promise<number>;
  /** Half-closes the write side. */
  closeWrite(): Promise<void>;
  /** Closes the connection. */
  close(): void;
}

/** Writes all of `data`. */
export async function writeAll(c: ByteConn, data: Uint8Array): Promise<void> {
  let off = 0;
  while (off < data.length) off += await c.write(data.subarray(off));
}

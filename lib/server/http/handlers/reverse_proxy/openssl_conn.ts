/**
 * A TLS client connection on the system's OpenSSL (openssl.ts), for upstreams whose transport
 * lets them renegotiate (`tls.renegotiation` `once` or `freely`): Deno's own TLS client never
 * renegotiates. OpenSSL runs over two memory BIOs; the ciphertext goes over a plain
 * connection (a `ByteConn`). A renegotiation the upstream asks for (a TLS 1.2 HelloRequest) happens inside
 * the reads and writes: a read or write that needs the upstream's next handshake message waits
 * for it. With `once`, a second request for renegotiation is answered with a no_renegotiation
 * alert (Go's `RenegotiateOnceAsClient`); upstreams end the connection on it.
 *
 * Verification is Go's: the chain against the trust pool (`ca`, else the system's), the name
 * (`server_name`, else the dial host) against the certificate; `insecure_skip_verify` skips
 * both. TLS 1.2 is the least version offered, as Go's client.
 *
 * @module
 */
import {
  cBuffer,
  openssl,
  opensslError,
  SSL_CTRL_GET_TOTAL_RENEGOTIATIONS,
  SSL_CTRL_SET_MIN_PROTO_VERSION,
  SSL_CTRL_SET_TLSEXT_HOSTNAME,
  SSL_ERROR_WANT_READ,
  SSL_ERROR_ZERO_RETURN,
  SSL_OP_NO_RENEGOTIATION,
  SSL_VERIFY_PEER,
  TLS1_2_VERSION,
} from "./openssl.ts";
import { type ByteConn, writeAll } from "./byte_conn.ts";

/** `tls.renegotiation`. */
export type Renegotiation = "never" | "once" | "freely";

const BIO_CTRL_PENDING = 10;
const SSL_ERROR_SYSCALL = 5;

/** The client side of a transport's TLS on OpenSSL: verification and trust (an `SSL_CTX`). */
export class OpenSslContext {
  readonly ctx: Deno.PointerObject;
  #freed = false;

  /** Verifies upstreams unless `insecure`, against `ca` (PEM) or the system's trust store. */
  constructor(readonly options: { insecure: boolean; ca?: string[] }) {
    const { ssl, crypto } = openssl();
    const ctx = ssl.SSL_CTX_new(ssl.TLS_client_method());
    if (!ctx) throw new Error(opensslError("SSL_CTX_new failed"));
    this.ctx = ctx;
    ssl.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, BigInt(TLS1_2_VERSION), null);
    if (options.insecure) return;
    ssl.SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, null);
    if (!options.ca) {
      ssl.SSL_CTX_set_default_verify_paths(ctx);
      return;
    }
    const store = ssl.SSL_CTX_get_cert_store(ctx);
    let added = 0;
    for (const pem of options.ca) {
      const bytes = new TextEncoder().encode(pem);
      const bio = crypto.BIO_new_mem_buf(bytes, bytes.length);
      for (;;) {
        const x509 = crypto.PEM_read_bio_X509(bio, null, null, null);
        if (!x509) break;
        if (crypto.X509_STORE_add_cert(store, x509) === 1) added++;
        crypto.X509_free(x509);
      }
      crypto.BIO_free(bio);
    }
    crypto.ERR_clear_error(); // the end of each PEM input leaves an error queued
    if (!added) throw new Error("no certificate in the trust pool could be read by OpenSSL");
  }

  /** True once freed: no connection can be made from it any more. */
  get closed(): boolean {
    return this.#freed;
  }

  /** Frees the context (connections made from it keep their own reference). */
  close(): void {
    if (this.#freed) return;
    this.#freed = true;
    openssl().ssl.SSL_CTX_free(this.ctx);
  }
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** ALPN protocol names in their wire form (each prefixed by its length). */
function alpnWire(protocols: string[]): Uint8Array<ArrayBuffer> {
  const parts = protocols.map((p) => new TextEncoder().encode(p));
  const out = new Uint8Array(parts.reduce((n, p) => n + 1 + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out[o++] = p.length;
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** A TLS connection on OpenSSL over a plain connection, itself a `ByteConn`. */
export class OpenSslConn implements ByteConn {
  #ssl: Deno.PointerObject | null;
  #rbio: Deno.PointerObject;
  #wbio: Deno.PointerObject;
  #tcp: ByteConn;
  #in = new Uint8Array(32 * 1024);
  #out = new Uint8Array(32 * 1024);
  #eof = false;
  #more: Promise<void> | null = null;
  #written: Promise<void> = Promise.resolve();
  #writeError: unknown = null;
  #once: boolean;
  #onceSet = false;
  /** The protocol the upstream chose by ALPN ("" when none). */
  alpn = "";

  /** The connection the ciphertext goes over. */
  get carrier(): ByteConn {
    return this.#tcp;
  }

  private constructor(tcp: ByteConn, ctx: OpenSslContext, renegotiation: Renegotiation) {
    const { ssl, crypto } = openssl();
    if (ctx.closed) throw new Error("the proxy's upstream client was closed");
    const s = ssl.SSL_new(ctx.ctx);
    if (!s) throw new Error(opensslError("SSL_new failed"));
    const rbio = crypto.BIO_new(crypto.BIO_s_mem());
    const wbio = crypto.BIO_new(crypto.BIO_s_mem());
    if (!rbio || !wbio) throw new Error(opensslError("BIO_new failed"));
    ssl.SSL_set_bio(s, rbio, wbio); // the SSL owns both BIOs from here
    ssl.SSL_set_connect_state(s);
    if (renegotiation === "never") ssl.SSL_set_options(s, SSL_OP_NO_RENEGOTIATION);
    this.#ssl = s;
    this.#rbio = rbio;
    this.#wbio = wbio;
    this.#tcp = tcp;
    this.#once = renegotiation === "once";
  }

  /**
   * Runs the TLS handshake over `tcp` (closed on failure). `serverName` goes in SNI unless it
   * is an IP address, and is the name the certificate must carry unless verification is off.
   *
   * @example
   * ```ts ignore
   * const tcp = await Deno.connect({ hostname: "127.0.0.1", port: 8443 });
   * const conn = await OpenSslConn.connect(tcp, ctx, "localhost", ["http/1.1"], "freely");
   * ```
   */
  static async connect(
    tcp: ByteConn,
    ctx: OpenSslContext,
    serverName: string,
    alpn: string[],
    renegotiation: Renegotiation,
  ): Promise<OpenSslConn> {
    const c = new OpenSslConn(tcp, ctx, renegotiation);
    try {
      await c.#handshake(ctx.options.insecure, serverName, alpn);
      return c;
    } catch (e) {
      c.close();
      throw e;
    }
  }

  async #handshake(insecure: boolean, name: string, alpn: string[]): Promise<void> {
    const { ssl, crypto } = openssl();
    const s = this.#ssl!;
    const ip = IPV4.test(name) || name.includes(":");
    if (name && !ip) ssl.SSL_ctrl(s, SSL_CTRL_SET_TLSEXT_HOSTNAME, 0n, cBuffer(name));
    if (!insecure && name) {
      const ok = ip
        ? crypto.X509_VERIFY_PARAM_set1_ip_asc(ssl.SSL_get0_param(s), cBuffer(name))
        : ssl.SSL_set1_host(s, cBuffer(name));
      if (ok !== 1) throw new Error(`cannot verify the upstream as ${JSON.stringify(name)}`);
    }
    if (alpn.length) {
      const wire = alpnWire(alpn);
      if (ssl.SSL_set_alpn_protos(s, wire, wire.length) !== 0) {
        throw new Error(opensslError("setting ALPN failed"));
      }
    }
    for (;;) {
      if (!this.#ssl) throw new Error("connection closed during the TLS handshake");
      crypto.ERR_clear_error();
      const r = ssl.SSL_do_handshake(s);
      const sent = this.#flush();
      if (r === 1) {
        await sent;
        break;
      }
      const err = ssl.SSL_get_error(s, r);
      if (err === SSL_ERROR_WANT_READ) {
        await sent;
        if (!(await this.#fill())) {
          throw new Error("the upstream closed the connection during the TLS handshake");
        }
        continue;
      }
      const verify = Number(ssl.SSL_get_verify_result(s));
      if (verify !== 0) {
        const why = crypto.X509_verify_cert_error_string(BigInt(verify));
        throw new Error(
          `TLS handshake: certificate verification failed: ${
            why ? Deno.UnsafePointerView.getCString(why) : verify
          }`,
        );
      }
      throw new Error(`TLS handshake: ${opensslError(`error ${err}`)}`);
    }
    const data = new BigUint64Array(1);
    const len = new Uint32Array(1);
    ssl.SSL_get0_alpn_selected(s, new Uint8Array(data.buffer), new Uint8Array(len.buffer));
    const p = Deno.UnsafePointer.create(data[0]);
    if (p && len[0]) {
      this.alpn = new TextDecoder().decode(
        new Uint8Array(new Deno.UnsafePointerView(p).getArrayBuffer(len[0])),
      );
    }
  }

  /** Ciphertext from the upstream into OpenSSL; false at EOF (or once closed). */
  #fill(): Promise<boolean> {
    if (this.#eof || !this.#ssl) return Promise.resolve(false);
    // reads and writes that wait for the upstream share one read of the connection
    this.#more ??= (async () => {
      try {
        const n = await this.#tcp.read(this.#in);
        if (n === null) this.#eof = true;
        else if (this.#ssl) openssl().crypto.BIO_write(this.#rbio, this.#in.subarray(0, n), n);
      } catch {
        this.#eof = true;
      } finally {
        this.#more = null;
      }
    })();
    return this.#more.then(() => !this.#eof && this.#ssl !== null);
  }

  /** Sends what OpenSSL has written (records, handshake messages), in order. */
  #flush(): Promise<void> {
    const { crypto } = openssl();
    while (this.#ssl && crypto.BIO_ctrl(this.#wbio, BIO_CTRL_PENDING, 0n, null) > 0n) {
      const n = crypto.BIO_read(this.#wbio, this.#out, this.#out.length);
      if (n <= 0) break;
      const bytes = this.#out.slice(0, n);
      this.#written = this.#written.then(() => writeAll(this.#tcp, bytes)).catch((e) => {
        this.#writeError ??= e;
      });
    }
    return this.#written;
  }

  /** With `once`: no renegotiation after the first one. */
  #afterRead(): void {
    if (!this.#once || this.#onceSet || !this.#ssl) return;
    const { ssl } = openssl();
    if (ssl.SSL_ctrl(this.#ssl, SSL_CTRL_GET_TOTAL_RENEGOTIATIONS, 0n, null) > 0n) {
      ssl.SSL_set_options(this.#ssl, SSL_OP_NO_RENEGOTIATION);
      this.#onceSet = true;
    }
  }

  async read(p: Uint8Array): Promise<number | null> {
    const { ssl, crypto } = openssl();
    for (;;) {
      if (!this.#ssl) return null;
      crypto.ERR_clear_error();
      const n = ssl.SSL_read(this.#ssl, p, p.length);
      this.#afterRead();
      this.#flush();
      if (n > 0) return n;
      const err = ssl.SSL_get_error(this.#ssl, n);
      if (err === SSL_ERROR_WANT_READ) {
        if (!(await this.#fill())) return null;
        continue;
      }
      if (err === SSL_ERROR_ZERO_RETURN || (err === SSL_ERROR_SYSCALL && this.#eof)) return null;
      throw new Error(`TLS: ${opensslError(`read error ${err}`)}`);
    }
  }

  async write(p: Uint8Array): Promise<number> {
    const { ssl, crypto } = openssl();
    if (!p.length) return 0;
    for (;;) {
      if (!this.#ssl) throw new Error("connection closed");
      if (this.#writeError) throw this.#writeError;
      crypto.ERR_clear_error();
      const n = ssl.SSL_write(this.#ssl, p, p.length);
      const sent = this.#flush();
      if (n > 0) {
        await sent;
        if (this.#writeError) throw this.#writeError;
        return n;
      }
      const err = ssl.SSL_get_error(this.#ssl, n);
      if (err === SSL_ERROR_WANT_READ) {
        // a renegotiation is under way: the upstream's next handshake message comes first
        if (!(await this.#fill())) throw new Error("connection closed");
        continue;
      }
      throw new Error(`TLS: ${opensslError(`write error ${err}`)}`);
    }
  }

  async closeWrite(): Promise<void> {
    if (!this.#ssl) return;
    openssl().ssl.SSL_shutdown(this.#ssl);
    await this.#flush();
    await this.#tcp.closeWrite().catch(() => {});
  }

  close(): void {
    const s = this.#ssl;
    if (!s) return;
    this.#ssl = null;
    // OpenSSL is only called synchronously, and every call checks #ssl after its awaits
    openssl().ssl.SSL_free(s);
    try {
      this.#tcp.close();
    } catch { /* closed */ }
  }
}

/**
 * One request/response exchange with an upstream, as every client of `reverse_proxy` takes it
 * (HTTP/1.1, HTTP/2, FastCGI) and the response head it gives back.
 *
 * @module
 */
import type { Tunnel } from "../../../module/listener.ts";
import type { Preface } from "./proxy_protocol.ts";

/** A response head from the upstream: header names in lower case, in the order received. */
export interface H1Response {
  /** Status code. */
  status: number;
  /** Header fields as received (hop-by-hop ones included), names in lower case. */
  headers: [string, string][];
  /** Body: a stream, the whole body for small ones, or null for no body. */
  body: ReadableStream<Uint8Array> | Uint8Array | null;
  /** After `101 Switching Protocols`: the connection, for the caller to relay or close. */
  tunnel?: Tunnel;
  /**
   * The response's HTTP version as `<major>.<minor>` (`1.1`, `1.0`, `2.0`, `3.0`); absent when
   * the protocol has none (FastCGI).
   */
  proto?: string;
}

/**
 * The key a request's connections are kept under: its upstream's, or with a PROXY header the
 * one of its client to that upstream (a connection carries one client's header); with a
 * server name resolved per request, that name's too (a connection made for one name never
 * carries a request for another).
 */
export function connectionKey(o: RoundTrip): string {
  const key = o.preface?.key ?? o.dial;
  return o.serverName === undefined ? key : `${key} sni=${o.serverName}`;
}

/** One request/response exchange. */
export interface RoundTrip {
  /** Dial address (`host:port` or `unix//path`). */
  dial: string;
  /** Request method (a token). */
  method: string;
  /** Request target (origin-form). */
  target: string;
  /** Header fields to send, names in lower case (from a `Headers` or the request's list). */
  fields: Iterable<[string, string]>;
  /** The fields carry a Content-Length (else a body goes chunked). */
  contentLength: boolean;
  /** Request body, or null. */
  body: ReadableStream<Uint8Array> | null;
  /** Connect timeout (ms, 0 = none). */
  dialTimeout: number;
  /** Time to wait for the response head (ms, 0 = none). */
  headerTimeout: number;
  /** True when the request asked for a protocol switch (a 101 is then acceptable). */
  upgrade?: boolean;
  /**
   * Settles when the client's exchange is over (the listener's `completed`); if that happens
   * while the response head is awaited, the client went away and the connection is closed.
   */
  clientDone?: Promise<unknown>;
  /** Runs once the exchange is over: body read or failed, or no body. */
  onDone(): void;
  /** Runs when the response body fails after the head was returned. */
  onBodyError?(e: unknown): void;
  /**
   * The PROXY protocol header new connections start with (`proxy_protocol`), and the key that
   * keeps the connections of one client to this upstream apart from other clients'.
   */
  preface?: Preface;
  /**
   * The TLS server name (SNI and the name the certificate is checked against) when the
   * transport's `server_name` has placeholders, resolved for this request ("" when they
   * resolve to nothing); its connections are kept apart from other names'. Absent: the
   * transport's name, else the dial host.
   */
  serverName?: string;
}

/**
 * The QUIC endpoints of this process, one per UDP address, kept for the process's life.
 *
 * Deno frees a QUIC endpoint's UDP socket only when the endpoint object is garbage-collected:
 * `close()` stops it, but the port stays bound until some later collection (a new endpoint
 * on it fails with "address in use" until then). So an HTTP/3 listener that stops does not
 * close its endpoint: it parks it here (no certificate: new handshakes are refused), and the
 * next listener on the same address takes it over. A port once used for HTTP/3 therefore
 * stays bound by the process until it exits, refusing handshakes while nothing serves on it.
 *
 * Each endpoint has one accept loop, started on its first `listen` and handing every
 * incoming connection to the endpoint's current owner; with no owner the connection is
 * refused. The loop never calls `accept` on an endpoint without a certificate: Deno's QUIC
 * aborts the process then. For the same reason every listener object stays referenced here:
 * Deno clears the endpoint's certificate when one of them is garbage-collected.
 *
 * @module
 */
import { adoptDatagramSocket, wildcardFor } from "./inherited.ts";

/** One endpoint and who serves on it now. */
export interface EndpointSlot {
  readonly endpoint: Deno.QuicEndpoint;
  /** The bound UDP port. */
  readonly port: number;
  /** Listens with this certificate and transport options (replaces the previous ones). */
  listen(options: Deno.QuicListenOptions): void;
  /** Takes incoming connections from now on (null: refuse them). */
  owner: ((incoming: Deno.QuicIncoming) => void) | null;
  /** Stops new handshakes (the endpoint keeps its socket, see the module doc). */
  park(): void;
}

const slots = new Map<string, EndpointSlot>();

/**
 * The endpoint for `hostname:port` (or inherited UDP socket `fd`): a parked one of an earlier
 * listener, or a new one. Throws when the address cannot be bound or the socket adopted.
 */
export function takeEndpoint(hostname: string, port: number, fd?: number): EndpointSlot {
  const key = fd === undefined ? `${hostname}|${port}` : `fd/${fd}`;
  const parked = port === 0 && fd === undefined ? undefined : slots.get(key);
  if (parked) return parked;
  const endpoint = new Deno.QuicEndpoint(
    fd === undefined ? { hostname, port } : { hostname: wildcardFor(fd), port: 0 },
  );
  if (fd !== undefined) {
    try {
      adoptDatagramSocket(endpoint, fd);
    } catch (e) {
      endpoint.close();
      throw e;
    }
  }
  const listeners: Deno.QuicListener[] = [];
  let listening = false;
  const slot: EndpointSlot = {
    endpoint,
    port: endpoint.addr.port,
    owner: null,
    listen(options) {
      const l = endpoint.listen(options);
      listeners.push(l);
      listening = true;
      if (listeners.length === 1) void loop(l);
    },
    park() {
      slot.owner = null;
      if (!listening) return;
      listening = false;
      try {
        listeners[listeners.length - 1].stop();
      } catch { /* stopped */ }
    },
  };
  const loop = async (l: Deno.QuicListener) => {
    try {
      for await (const incoming of l) {
        const owner = slot.owner;
        if (owner && listening) owner(incoming);
        else incoming.refuse();
      }
    } catch { /* the endpoint closed */ }
  };
  slots.set(fd === undefined ? `${hostname}|${slot.port}` : key, slot);
  return slot;
}

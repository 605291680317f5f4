/**
 * Listener wrappers (Caddy's `caddy.listeners.*` modules, a server's `listener_wrappers`): code
 * that sees each new connection before TLS and HTTP do. A wrapper reads the first bytes of the
 * connection through a `PendingConnection` (which keeps every byte it was given, so the next
 * wrapper, TLS and the HTTP parser still see what nobody consumed), may consume a header
 * (`proxy_protocol`), replace the peer address, or answer the connection itself and close it
 * (`http_redirect`).
 *
 * The `tls` wrapper is a marker: the wrappers before it run on the raw bytes; on a server that
 * terminates TLS, nothing may come after it here (see `server_options.ts`).
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import type { ListenerWrapper, PendingConnection } from "../../module/listener.ts";
import { Decoder } from "../../config/decode.ts";

/** Runs `wrappers` in order on a connection; true when it goes on to TLS/HTTP. */
export async function runWrappers(
  wrappers: readonly ListenerWrapper[],
  conn: PendingConnection,
): Promise<boolean> {
  for (const w of wrappers) {
    let go: boolean;
    try {
      go = await w.accept(conn);
    } catch {
      go = false;
    }
    if (!go) {
      conn.close();
      return false;
    }
  }
  return true;
}

/** `caddy.listeners.tls`: marks where TLS goes in the chain (it does nothing itself). */
export const tlsMarkerModule: ModuleDefinition<ListenerWrapper> = {
  id: "caddy.listeners.tls",
  create(config) {
    new Decoder(config, "caddy.listeners.tls").fields(["wrapper"]);
    return { name: "tls", accept: () => Promise.resolve(true) };
  },
};

/**
 * `forward_auth ... { copy_headers Remote-User X-Groups>X-Role }` through a real `gatehouse
 * run` process (both engines), with a real auth service and backend on loopback recording
 * what they receive. A client's own copies of the names must never reach the backend, in
 * any spelling a backend could read as the copied name (`Remote_user`, `Remote.user` become
 * `HTTP_REMOTE_USER` in CGI and PHP), and a name the auth reply lacks must be absent, not
 * empty.
 *
 * What current Caddy does, and what this follows: its forward_auth adapter
 * (caddyserver/caddy modules/caddyhttp/reverseproxy/forwardauth/caddyfile.go, the fix of
 * GHSA-7r4p-vjf4-gxv4, Caddy 2.11.2) emits, for each copied header, a `headers` route that
 * deletes the target name (`http.CanonicalHeaderKey(to)`; header deletion is
 * case-insensitive) and then one that sets it from `{http.reverse_proxy.header.<From>}` only
 * when that placeholder is not empty (`not` + `vars`); the adapter here emits the same JSON
 * (the corpus's `forward_auth_copy_headers_strip`). A missing placeholder reads as "" in its
 * `vars` matcher (modules/caddyhttp/vars.go, since 2.8; 2.6.2 read `<nil>`, so the set ran
 * and the header arrived empty — the bug here). The other spellings are dropped by its server
 * before any route (modules/caddyhttp/server.go, GHSA-f59h-q822-g45g for `_`,
 * GHSA-49wc-4hcv-v58q for `.`), as here (header_aliases.ts).
 */
import assert from "node:assert/strict";
import { startGatehouse } from "../server/http/hostile.ts";
import { adaptGatehousefile } from "../../lib/server/adapters/gatehousefile/mod.ts";

const ENGINES = ["deno", "node"] as const;

interface Recorder {
  port: number;
  seen: [string, string][][];
  close(): Promise<void>;
}

/** A loopback server recording each request's fields; `answer` builds the response. */
function recorder(answer: (req: Request) => Response): Recorder {
  const seen: [string, string][][] = [];
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen() {} },
    (req) => {
      seen.push([...req.headers]);
      return answer(req);
    },
  );
  return {
    port: server.addr.port,
    seen,
    async close() {
      ac.abort();
      await server.finished;
    },
  };
}

/** The auth service: 200 with the identity the `X-Forwarded-Uri` asks for, 401 for `/deny`. */
function authService(): Recorder {
  return recorder((req) => {
    const uri = req.headers.get("x-forwarded-uri") ?? "";
    if (uri.startsWith("/deny")) return new Response("who are you", { status: 401 });
    const h = new Headers();
    if (!uri.startsWith("/anonymous")) {
      h.set("Remote-User", "alice");
      h.set("X-Groups", "admins");
    }
    return new Response(null, { status: 200, headers: h });
  });
}

/** The site's routes, adapted from the Caddyfile as `gatehouse run --config` would. */
function siteRoutes(auth: number, backend: number): unknown[] {
  const text = `:8080 {
\tforward_auth 127.0.0.1:${auth} {
\t\turi /verify
\t\tcopy_headers Remote-User X-Groups>X-Role
\t}
\treverse_proxy 127.0.0.1:${backend}
}
`;
  const { result } = adaptGatehousefile(text);
  const servers = (result as { apps: { http: { servers: Record<string, { routes: unknown[] }> } } })
    .apps.http.servers;
  return Object.values(servers)[0].routes;
}

const SPOOFS = {
  "Remote-User": "mallory",
  "Remote_user": "mallory",
  "Remote.user": "mallory",
  "remote_USER": "mallory",
  "X-Role": "root",
  "X_Role": "root",
  "X.Role": "root",
};

/** The backend's fields whose names fold onto the copied names, Remote-User and X-Role. */
function identityFields(fields: [string, string][]): [string, string][] {
  const fold = (k: string) => k.toLowerCase().replace(/[_.]/g, "-");
  return fields.filter(([k]) => ["remote-user", "x-role"].includes(fold(k)));
}

for (const engine of ENGINES) {
  Deno.test(`forward_auth (${engine} engine): copies are the auth reply's alone, in every spelling`, async () => {
    const auth = authService();
    const backend = recorder(() => new Response("backend"));
    const g = await startGatehouse({
      site: { listener_engine: engine, routes: siteRoutes(auth.port, backend.port) },
    });
    try {
      const base = `http://127.0.0.1:${g.ports.site}`;

      let r = await fetch(`${base}/app`, { headers: SPOOFS });
      assert.equal(await r.text(), "backend");
      assert.deepEqual(identityFields(backend.seen.at(-1)!), [
        ["remote-user", "alice"],
        ["x-role", "admins"],
      ]);

      // the auth reply carries no identity: the copies are absent, not empty
      r = await fetch(`${base}/anonymous`, { headers: SPOOFS });
      assert.equal(await r.text(), "backend");
      assert.deepEqual(identityFields(backend.seen.at(-1)!), []);

      // a refusal is relayed and the backend never asked
      const before = backend.seen.length;
      r = await fetch(`${base}/deny`, { headers: SPOOFS });
      assert.equal(r.status, 401);
      assert.equal(await r.text(), "who are you");
      assert.equal(backend.seen.length, before);

      // what the auth service saw: the client's fields as sent to it, minus the spellings
      assert.equal(auth.seen.length, 3);
      for (const fields of auth.seen) {
        const names = fields.map(([k]) => k);
        assert.ok(!names.some((k) => k.includes("_") || k.includes(".")), names.join(", "));
      }
    } finally {
      await g.stop();
      await auth.close();
      await backend.close();
    }
  });
}

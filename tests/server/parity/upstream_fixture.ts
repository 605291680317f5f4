/**
 * A small upstream for proxy tests: answers every request with a JSON echo of what it got
 * (method, URI, chosen headers, body) and lets the path pick the status and extra headers:
 * `/status/<code>`, `/auth/ok` (200 with `Remote-User`), `/auth/deny` (401), `/accel`
 * (`X-Accel-Redirect`).
 */
export interface Upstream {
  /** `127.0.0.1:<port>` */
  dial: string;
  /** Requests seen so far. */
  seen: { method: string; uri: string; headers: Record<string, string>; body: string }[];
  stop(): Promise<void>;
}

export function startUpstream(name = "up"): Upstream {
  const seen: Upstream["seen"] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const body = await req.text();
    const headers: Record<string, string> = {};
    for (const [k, v] of req.headers) headers[k] = v;
    const uri = url.pathname + url.search;
    seen.push({ method: req.method, uri, headers, body });
    const echo = JSON.stringify({ name, method: req.method, uri, body, headers });
    const h = new Headers({ "content-type": "application/json", "x-upstream": name });
    const status = /^\/status\/(\d{3})/.exec(url.pathname);
    if (status) {
      h.set("x-upstream-status", status[1]);
      return new Response(`upstream says ${status[1]}`, { status: Number(status[1]), headers: h });
    }
    if (url.pathname === "/auth/ok") {
      h.set("remote-user", "ann");
      h.set("remote-groups", "admins,dev");
      return new Response("auth ok", { status: 200, headers: h });
    }
    if (url.pathname === "/auth/deny") {
      return new Response("go away", { status: 401, headers: { "www-authenticate": "Basic" } });
    }
    if (url.pathname === "/accel") {
      h.set("x-accel-redirect", "/files/secret.txt");
      return new Response("accel body", { headers: h });
    }
    return new Response(echo, { headers: h });
  });
  const port = (server.addr as Deno.NetAddr).port;
  return {
    dial: `127.0.0.1:${port}`,
    seen,
    async stop() {
      await server.shutdown();
    },
  };
}

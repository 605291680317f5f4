/**
 * One spelling per host, through a real `gatehouse run` process (both listener engines): a
 * name with the DNS root's trailing dot (`admin.test.`) is the same site as `admin.test`, so
 * it cannot step past a `host` route (Caddy 2.6.2 lets `admin.test.` fall through to the next
 * route), and routes, placeholders and the upstream `Host` all see `admin.test`. Names with an
 * empty label (`.a`, `a..b`, `a..`) are no DNS names: 400 before any route.
 */
import assert from "node:assert/strict";
import { startGatehouse } from "../server/http/hostile.ts";
import { exchange, FramingUpstream } from "./_framing_upstream.ts";

const ENGINES = ["deno", "node"] as const;

function get(port: number, host: string, target = "/"): Promise<string> {
  return exchange(port, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
}

function status(answer: string): number {
  return Number(answer.split(" ")[1]);
}

function body(answer: string): string {
  return answer.slice(answer.indexOf("\r\n\r\n") + 4);
}

for (const engine of ENGINES) {
  Deno.test(`host (${engine} engine): a trailing dot names the same site, empty labels are 400`, async () => {
    const up = new FramingUpstream();
    const g = await startGatehouse({
      site: {
        listener_engine: engine,
        routes: [
          {
            match: [{ host: ["admin.test"] }],
            handle: [{ handler: "static_response", status_code: 403, body: "admin refused" }],
            terminal: true,
          },
          {
            match: [{ host: ["api.test"] }],
            handle: [{ handler: "reverse_proxy", upstreams: [{ dial: up.dial }] }],
            terminal: true,
          },
          {
            handle: [{
              handler: "static_response",
              body: "host={http.request.host} hostport={http.request.hostport}",
            }],
          },
        ],
      },
    });
    try {
      const port = g.ports.site;
      for (const h of ["admin.test", "admin.test.", "ADMIN.TEST.", "admin.test.:80"]) {
        const a = await get(port, h);
        assert.equal(status(a), 403, `Host ${h}: ${a}`);
        assert.equal(body(a), "admin refused");
      }
      for (const t of ["http://admin.test./", "http://admin.test.:80/x"]) {
        const a = await get(port, "other.test", t);
        assert.equal(status(a), 403, `target ${t}: ${a}`);
      }
      assert.equal(body(await get(port, "www.test.:8080")), "host=www.test hostport=www.test:8080");
      assert.equal(body(await get(port, "www.test.")), "host=www.test hostport=www.test");
      // The upstream sees the one spelling, in Host and X-Forwarded-Host.
      assert.equal(body(await get(port, "api.test.")), "ok GET /");
      const fields = Object.fromEntries(up.requests[0].fields);
      assert.equal(fields.host, "api.test");
      assert.equal(fields["x-forwarded-host"], "api.test");
      for (const h of [".admin.test", "admin..test", "admin.test..", ".", "..", "a.:1"]) {
        const a = await get(port, h);
        if (h === "a.:1") {
          assert.equal(body(a), "host=a hostport=a:1");
          continue;
        }
        assert.equal(status(a), 400, `Host ${JSON.stringify(h)}: ${a}`);
        assert.doesNotMatch(a, /admin refused|host=/);
      }
      assert.equal(up.requests.length, 1, "nothing else reached the upstream");
    } finally {
      await g.stop();
      await up.close();
    }
  });
}

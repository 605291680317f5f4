/**
 * Metrics: a server with `apps.http.metrics` measured under real traffic, scraped from a
 * `metrics` handler and from the admin endpoint's `/metrics`, and parsed with a Prometheus
 * text-format parser; counters move with traffic, per-host labels follow `per_host`.
 */
import assert from "node:assert/strict";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { startHttp } from "../http/harness.ts";
import { raw } from "../http/raw.ts";

interface Family {
  name: string;
  type: string;
  metrics: {
    labels?: Record<string, string>;
    value?: string;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }[];
}

function parse(text: string): Map<string, Family> {
  const families = (parsePrometheusTextFormat as (t: string) => Family[])(text);
  return new Map(families.map((f) => [f.name, f]));
}

/**
 * One series of a histogram family, parsed: the parser flattens a histogram to one series,
 * so the series' lines are picked (labels as given) and their other labels dropped first.
 */
function histogram(
  text: string,
  name: string,
  labels: Record<string, string>,
): { buckets: Record<string, string>; count: number; sum: number } | undefined {
  const lines = text.split("\n").filter((l) => {
    const m = /^([a-z_]+)\{([^}]*)\}/.exec(l);
    if (!m || ![`${name}_bucket`, `${name}_sum`, `${name}_count`].includes(m[1])) return false;
    return Object.entries(labels).every(([k, v]) => m[2].includes(`${k}="${v}"`));
  }).map((l) =>
    l.replace(/\{([^}]*)\}/, (_, inner: string) => {
      const le = /le="([^"]*)"/.exec(inner);
      return le ? `{le="${le[1]}"}` : "";
    })
  );
  if (lines.length === 0) return undefined;
  const fam = parse(`# TYPE ${name} histogram\n${lines.join("\n")}\n`).get(name)!;
  const m = fam.metrics[0];
  return { buckets: m.buckets ?? {}, count: Number(m.count), sum: Number(m.sum) };
}

function value(f: Family | undefined, labels: Record<string, string>): number {
  const m = f?.metrics.find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
  return m ? Number(m.value ?? m.count) : 0;
}

Deno.test("metrics: counters and histograms move with traffic, scraped two ways", async () => {
  const srv = await startHttp({
    metrics: { per_host: true },
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          {
            match: [{ path: ["/metrics"] }],
            handle: [{ handler: "metrics" }],
            terminal: true,
          },
          {
            match: [{ host: ["known.test"] }],
            handle: [{ handler: "static_response", body: "hello known" }],
            terminal: true,
          },
          {
            match: [{ path: ["/fail"] }],
            handle: [{ handler: "error", status_code: 503, error: "down" }],
            terminal: true,
          },
          { handle: [{ handler: "static_response", body: "x".repeat(1000) }] },
        ],
      },
    },
  });
  try {
    const scrape = async (accept?: string) => {
      const r = await raw(srv.url(), "GET", "/metrics", accept ? { accept } : {});
      assert.equal(r.status, 200);
      return r;
    };
    const before = parse((await scrape()).text);
    const reqs = before.get("caddy_http_requests_total");
    const known0 = value(reqs, { server: "srv0", handler: "static_response", host: "known.test" });

    for (let i = 0; i < 3; i++) await raw(srv.url(), "GET", "/", { host: "known.test" });
    await raw(srv.url(), "POST", "/big", { host: "unknown.test" }, "body");
    await raw(srv.url(), "GET", "/fail", { host: "unknown.test" });

    const first = await scrape();
    assert.equal(first.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    const after = parse(first.text);
    const total = after.get("caddy_http_requests_total")!;
    assert.equal(total.type, "COUNTER");
    assert.equal(
      value(total, { server: "srv0", handler: "static_response", host: "known.test" }) - known0,
      3,
    );
    // hosts no host matcher names are pooled as _other (per_host without catch-all)
    assert.ok(value(total, { handler: "static_response", host: "_other" }) >= 1);
    assert.equal(
      value(after.get("caddy_http_request_errors_total"), { handler: "error", host: "_other" }),
      1,
    );
    assert.equal(after.get("caddy_http_request_duration_seconds")!.type, "HISTOGRAM");
    const ok = histogram(first.text, "caddy_http_request_duration_seconds", {
      handler: "static_response",
      code: "200",
      method: "GET",
      host: "known.test",
    })!;
    assert.ok(ok.count >= 3);
    assert.equal(ok.buckets["+Inf"], String(ok.count));
    const failed = histogram(first.text, "caddy_http_request_duration_seconds", {
      handler: "error",
      code: "503",
    })!;
    assert.equal(failed.count, 1);
    const big = histogram(first.text, "caddy_http_response_size_bytes", { method: "POST" })!;
    assert.equal(big.sum, 1000, "response bytes counted as sent");
    assert.equal(big.buckets["1024"], "1");
    assert.equal(big.buckets["256"], "0");
    assert.equal(
      value(after.get("caddy_http_requests_in_flight"), {
        handler: "static_response",
        host: "known.test",
      }),
      0,
    );
    assert.ok(after.has("process_resident_memory_bytes"));
    assert.ok(value(after.get("promhttp_metric_handler_requests_total"), { code: "200" }) >= 1);

    // OpenMetrics on request
    const om = await scrape("application/openmetrics-text;version=1.0.0");
    assert.match(
      om.headers.get("content-type")!,
      /^application\/openmetrics-text; version=1\.0\.0/,
    );
    assert.match(om.text, /# TYPE caddy_http_requests counter\n/);
    assert.ok(om.text.endsWith("# EOF\n"));

    // the admin endpoint serves the same registry, in the text format
    const admin = await srv.admin("/metrics");
    assert.equal(admin.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    const fromAdmin = parse(await admin.text());
    assert.ok(
      value(fromAdmin.get("caddy_http_requests_total"), {
        handler: "static_response",
        host: "known.test",
      }) >= 3,
    );
  } finally {
    await srv.stop();
  }
});

Deno.test("metrics: a server's metrics object turns them on for the app, without host labels", async () => {
  const srv = await startHttp({
    servers: {
      plain: {
        listen: ["127.0.0.1:0"],
        metrics: {},
        routes: [{ handle: [{ handler: "static_response", body: "ok" }] }],
      },
      quiet: {
        listen: ["127.0.0.1:0"],
        routes: [{ handle: [{ handler: "static_response", body: "quiet" }] }],
      },
    },
  });
  try {
    await raw(srv.url("plain"), "GET", "/");
    await raw(srv.url("plain"), "GET", "/");
    assert.equal((await raw(srv.url("quiet"), "GET", "/")).text, "quiet");
    const fams = parse(await (await srv.admin("/metrics")).text());
    const total = fams.get("caddy_http_requests_total")!;
    const plain = total.metrics.filter((m) => m.labels?.server === "plain");
    assert.ok(plain.length >= 1);
    assert.ok(plain.every((m) => m.labels?.host === undefined), "no host label");
    // metrics are on for the whole app once a server asks (as Caddy merges them)
    assert.ok(total.metrics.some((m) => m.labels?.server === "quiet"));
  } finally {
    await srv.stop();
  }
});

Deno.test("metrics: otlp pushes the registry to an OTLP receiver, protobuf and JSON", async () => {
  const { startReceiver } = await import("./otlp_receiver.ts");
  for (const protocol of ["http/protobuf", "http/json"]) {
    const receiver = startReceiver();
    // The metrics-only variables: the tracing tests, in the same process under --parallel,
    // set the traces ones, and neither may send the other's data to its receiver.
    const envs = {
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.endpoint}/v1/metrics`,
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: protocol,
      OTEL_METRIC_EXPORT_INTERVAL: "100",
    };
    for (const [k, v] of Object.entries(envs)) Deno.env.set(k, v);
    const srv = await startHttp({
      metrics: { otlp: true },
      servers: {
        pushed: {
          listen: ["127.0.0.1:0"],
          routes: [{ handle: [{ handler: "static_response", body: "ok" }] }],
        },
      },
    });
    try {
      for (let i = 0; i < 4; i++) await raw(srv.url(), "GET", "/");
      const total = () =>
        receiver.points.filter((p) =>
          p.metric === "caddy_http_requests_total" && p.attributes.server === "pushed"
        );
      const end = Date.now() + 10_000;
      while (!total().some((p) => p.value >= 4) && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const last = total().at(-1);
      assert.ok(
        last && last.value >= 4,
        `${protocol}: requests_total pushed (${JSON.stringify(last)})`,
      );
      assert.equal(last!.kind, "sum");
      assert.ok(
        receiver.points.some((p) =>
          p.metric === "caddy_http_request_duration_seconds" && p.kind === "histogram" &&
          p.attributes.server === "pushed" && p.value >= 4
        ),
      );
      assert.ok(
        receiver.contentTypes.every((t) =>
          t.includes(protocol === "http/json" ? "json" : "protobuf")
        ),
      );
    } finally {
      await srv.stop();
      await receiver.stop();
      for (const k of Object.keys(envs)) Deno.env.delete(k);
    }
  }
});

Deno.test({
  name: "metrics: the same HTTP families and labels as Caddy 2.6.2",
  ignore: !(await import("./oracle.ts")).caddyInstalled(),
  async fn() {
    const { startCaddy } = await import("./oracle.ts");
    const http = {
      servers: {
        srv0: {
          listen: ["127.0.0.1:0"],
          routes: [
            {
              match: [{ path: ["/metrics"] }],
              handle: [{ handler: "metrics" }],
              terminal: true,
            },
            { handle: [{ handler: "static_response", body: "hello" }] },
          ],
        },
      },
    };
    // the server's `metrics` object turns them on in both
    (http.servers.srv0 as Record<string, unknown>).metrics = {};
    const srv = await startHttp(http);
    const caddy = await startCaddy(http);
    const shape = async (base: string) => {
      for (let i = 0; i < 3; i++) await raw(base, "GET", "/page");
      const fams = parse((await raw(base, "GET", "/metrics")).text);
      const out: Record<string, string[]> = {};
      for (const [name, f] of fams) {
        if (!name.startsWith("caddy_http_")) continue;
        const keys = new Set<string>();
        for (const m of f.metrics) {
          if (m.labels?.server !== "srv0") continue;
          for (const k of Object.keys(m.labels ?? {})) keys.add(k);
        }
        out[`${name} ${f.type}`] = [...keys].sort();
      }
      return out;
    };
    try {
      const ours = await shape(srv.url());
      const theirs = await shape(caddy.url);
      assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort());
      for (const k of Object.keys(theirs)) {
        // histograms lose their labels in the parser; counters and gauges keep them
        if (!k.endsWith("HISTOGRAM")) assert.deepEqual(ours[k], theirs[k], k);
      }
      const ourText = (await raw(srv.url(), "GET", "/metrics")).text;
      const theirText = (await raw(caddy.url, "GET", "/metrics")).text;
      const count = (t: string) =>
        value(parse(t).get("caddy_http_requests_total"), {
          server: "srv0",
          handler: "static_response",
        });
      assert.equal(count(ourText), count(theirText));
      const sel = { server: "srv0", handler: "static_response", code: "200", method: "GET" };
      for (const name of ["caddy_http_request_size_bytes", "caddy_http_response_size_bytes"]) {
        const a = histogram(ourText, name, sel)!;
        const b = histogram(theirText, name, sel)!;
        assert.deepEqual([a.count, a.sum, a.buckets], [b.count, b.sum, b.buckets], name);
      }
    } finally {
      await caddy.stop();
      await srv.stop();
    }
  },
});

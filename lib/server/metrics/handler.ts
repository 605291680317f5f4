/**
 * The `metrics` handler (`http.handlers.metrics`) and the admin API's `GET /metrics`
 * (`admin.api.metrics`): the process registry in the Prometheus text format, or OpenMetrics
 * when the scraper asks for it (unless `disable_openmetrics`; the admin endpoint always
 * answers in the text format, as Caddy's). In a worker process the handler answers what the
 * admin endpoint does: every worker's registry summed, in the text format (see `shared.ts`). Scrapes are counted in
 * `promhttp_metric_handler_requests_total` and `promhttp_metric_handler_requests_in_flight`.
 *
 * @module
 */
import type { AdminRoute, ModuleDefinition } from "../module/mod.ts";
import { Decoder } from "../config/decode.ts";
import type { HttpHandler } from "../http/handler.ts";
import { installProcessMetrics } from "./process.ts";
import { registry, scrapeResponse, TEXT_FORMAT } from "./registry.ts";
import { sharedScrape } from "./shared.ts";

function scrape(request: Request, openMetrics: boolean): Response {
  installProcessMetrics();
  const total = registry.counter(
    "promhttp_metric_handler_requests_total",
    "Total number of scrapes by HTTP status code.",
    ["code"],
  );
  const inFlight = registry.gauge(
    "promhttp_metric_handler_requests_in_flight",
    "Current number of scrapes being served.",
  );
  inFlight.add({}, 1);
  try {
    const res = scrapeResponse(request, openMetrics);
    total.inc({ code: String(res.status) });
    return res;
  } finally {
    inFlight.add({}, -1);
  }
}

/** Registry entry of `http.handlers.metrics`. */
export const metricsHandlerModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.metrics",
  create(config) {
    const d = new Decoder(config, "http.handlers.metrics").fields([
      "handler",
      "disable_openmetrics",
    ]);
    const openMetrics = !(d.bool("disable_openmetrics") ?? false);
    return {
      serveHTTP: async (c) => {
        // a worker process: every worker's registry summed, in the text format
        const shared = sharedScrape();
        if (!shared) return scrape(c.request, openMetrics);
        return new Response(await shared(), { headers: { "content-type": TEXT_FORMAT } });
      },
    };
  },
};

/** `GET /metrics` on the admin API. */
export const metricsAdminRoute: AdminRoute = {
  pattern: "/metrics",
  handle(request) {
    if (request.method !== "GET" && request.method !== "HEAD") {
      return new Response(JSON.stringify({ error: "method not allowed" }) + "\n", {
        status: 405,
        headers: { "content-type": "application/json", allow: "GET" },
      });
    }
    return scrape(request, false);
  },
};

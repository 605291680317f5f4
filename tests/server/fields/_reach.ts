/**
 * Configs that reach every decoder of the standard modules (nested objects present), for the
 * field audit: validating them makes each decoder declare the fields it accepts.
 */
const h = (handler: string, o: Record<string, unknown> = {}) => ({ handler, ...o });

/** Handlers, each in its own route. */
export const HANDLERS: Record<string, unknown>[] = [
  h("static_response", { body: "x" }),
  h("subroute", { routes: [], errors: { routes: [] } }),
  h("headers", {
    request: { set: { A: ["b"] }, replace: { A: [{ search: "a", replace: "b" }] } },
    response: { set: { A: ["b"] }, require: { status_code: [200], headers: { A: ["b"] } } },
  }),
  h("rewrite", { uri: "/x", query: { set: [{ param: "a", value: "b" }] } }),
  h("vars", { a: "b" }),
  h("map", {
    source: "{http.request.host}",
    destinations: ["{x}"],
    mappings: [{ input: "a", outputs: ["b"] }],
  }),
  h("error", { error: "x", status_code: 500 }),
  h("authentication", {
    providers: {
      http_basic: {
        accounts: [{
          username: "a",
          password: "$2a$14$Zkx19XLiW6VYouLHR5NmfOFU0z2GTNmpkT/5qqR7hx4IjWJPDhjvG",
        }],
        hash: { algorithm: "bcrypt" },
      },
    },
  }),
  h("request_body", { max_size: 10 }),
  h("intercept", { handle_response: [{ match: { status_code: [500] }, routes: [] }] }),
  h("copy_response", { status_code: 200 }),
  h("copy_response_headers", { include: ["A"] }),
  h("metrics"),
  h("tracing", { span: "x" }),
  h("invoke", { name: "named" }),
  h("log_append", { key: "a", value: "b" }),
  h("encode", {
    encodings: { gzip: {}, zstd: {} },
    match: { headers: { "Content-Type": ["text/*"] } },
  }),
  h("file_server", { root: "/tmp", browse: {} }),
  h("reverse_proxy", {
    upstreams: [{ dial: "127.0.0.1:9" }],
    load_balancing: { selection_policy: { policy: "random" }, retry_match: [{ method: ["GET"] }] },
    health_checks: { active: { uri: "/h" }, passive: { fail_duration: "1s" } },
    headers: { request: { set: { A: ["b"] } }, response: { set: { A: ["b"] } } },
    rewrite: { method: "GET" },
    handle_response: [{ match: { status_code: [500] }, routes: [] }],
    transport: {
      protocol: "http",
      tls: { ca: { provider: "inline", trusted_ca_certs: [] } },
      network_proxy: { from: "none" },
      keep_alive: {},
      resolver: { addresses: [] },
    },
  }),
];

/** Matcher sets, each on its own route. */
export const MATCHERS: Record<string, unknown>[] = [
  { host: ["a"] },
  { method: ["GET"] },
  { path: ["/a"] },
  { path_regexp: { pattern: "a" } },
  { header: { A: ["b"] } },
  { header_regexp: { A: { pattern: "a" } } },
  { query: { a: ["b"] } },
  { protocol: "http" },
  { remote_ip: { ranges: ["127.0.0.1"] } },
  { client_ip: { ranges: ["127.0.0.1"] } },
  { not: [{ method: ["POST"] }] },
  { vars: { a: ["b"] } },
  { vars_regexp: { a: { pattern: "b" } } },
  { expression: "true" },
  { url_pattern: { pattern: "/a" } },
  { file: { try_files: ["{path}"] } },
];

/** A server with every connection field and its nested objects. */
export const SERVER: Record<string, unknown> = {
  listen: ["127.0.0.1:1"],
  listener_wrappers: [
    { wrapper: "http_redirect" },
    { wrapper: "proxy_protocol" },
  ],
  errors: { routes: [] },
  logs: {},
  trusted_proxies: { source: "static", ranges: ["127.0.0.1/32"] },
  named_routes: { named: { handle: [h("static_response")] } },
  metrics: {},
  automatic_https: { disable: true },
};

/** The whole config (http app with servers, metrics, logging with the wrapping encoders). */
export function reachConfig(): Record<string, unknown> {
  const routes = [
    ...HANDLERS.map((handle) => ({ handle: [handle] })),
    ...MATCHERS.map((m) => ({ match: [m], handle: [h("static_response")] })),
  ];
  return {
    admin: { disabled: true },
    logging: {
      logs: {
        default: {
          writer: { output: "discard" },
          encoder: {
            format: "filter",
            wrap: { format: "append", wrap: { format: "json" }, fields: { a: "b" } },
            fields: {
              a: { filter: "delete" },
              b: { filter: "rename", name: "c" },
              d: { filter: "replace", value: "x" },
              e: { filter: "ip_mask", ipv4_cidr: 8 },
              f: { filter: "hash" },
              g: { filter: "regexp", regexp: "a", value: "b" },
              h: { filter: "multi_regexp", operations: [{ regexp: "a", value: "b" }] },
              i: { filter: "query", actions: [{ type: "delete", parameter: "a" }] },
              j: { filter: "cookie", actions: [{ type: "delete", name: "a" }] },
              k: { filter: "set_cookie", actions: [{ type: "delete", name: "a" }] },
            },
          },
        },
        j: {
          writer: { output: "discard" },
          encoder: { format: "journald", wrap: { format: "console" } },
        },
        out: { writer: { output: "stdout" }, sampling: { interval: "1s" } },
        err: { writer: { output: "stderr" } },
        net: { writer: { output: "net", address: "127.0.0.1:9", soft_start: true } },
        // validating creates nothing: the file need not exist
        file: { writer: { output: "file", filename: "/tmp/gatehouse-audit-reach/reach.log" } },
      },
    },
    apps: {
      http: {
        grace_period: "1s",
        metrics: {},
        servers: { srv0: { ...SERVER, routes } },
      },
    },
  };
}

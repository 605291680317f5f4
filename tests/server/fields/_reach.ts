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
  h("push", { resources: [{ method: "GET", target: "/a.css" }], headers: { set: { A: ["b"] } } }),
  h("metrics"),
  h("tracing", { span: "x" }),
  h("invoke", { name: "named" }),
  h("log_append", { key: "a", value: "b" }),
  h("encode", {
    encodings: { gzip: {}, zstd: {} },
    match: { headers: { "Content-Type": ["text/*"] } },
  }),
  h("file_server", { root: "/tmp", browse: {} }),
  h("cache", {
    key: { disable_query: true },
    cache_keys: { a: {} },
    regex: { exclude: "^/x" },
    otter: { configuration: { size: 10 } },
  }),
  h("cache", {
    simplefs: { path: "/tmp/gatehouse-audit-reach/cache", configuration: { size: 10 } },
  }),
  h("rate_limit", {
    rate_limits: { z: { window: "1s", max_events: 1 } },
    distributed: {},
    storage: { module: "file_system", root: "/tmp" },
  }),
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
  h("reverse_proxy", {
    upstreams: [{ dial: "127.0.0.1:9" }],
    transport: { protocol: "fastcgi", root: "/tmp" },
  }),
  h("reverse_proxy", {
    dynamic_upstreams: {
      source: "multi",
      sources: [
        { source: "a", name: "a.example", versions: { ipv4: true } },
        { source: "srv", name: "srv.example" },
      ],
    },
  }),
  h("acme_server", { policy: { allow: { domains: ["a.example"] }, deny: {} } }),
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
    admin: { disabled: true, config: { persist: false } },
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
      cache: { key: {}, regex: {}, otter: { configuration: { size: 10 } } },
      http: {
        grace_period: "1s",
        metrics: {},
        servers: { srv0: { ...SERVER, routes } },
      },
    },
  };
}

/**
 * The `tls` and `pki` apps with every decoder reached: loaded certificates, automation
 * policies with each issuer (acme with every challenge, zerossl in both forms, internal),
 * on-demand, certificate managers, DNS providers, and a server whose connection policy
 * authenticates clients through every trust pool provider and leaf loader.
 */
export function reachTlsConfig(pem: { cert: string; key: string }): Record<string, unknown> {
  const dns = { provider: { name: "mock" }, ttl: "1m", resolvers: ["127.0.0.1:9"] };
  const acme = {
    module: "acme",
    ca: "https://127.0.0.1:9/dir",
    email: "a@example.com",
    external_account: { key_id: "k", mac_key: "bWFj" },
    challenges: {
      http: { alternate_port: 9080 },
      "tls-alpn": { alternate_port: 9443 },
      dns,
      bind_host: "127.0.0.1",
    },
    preferred_chains: { smallest: true },
  };
  const b64 = pem.cert.replace(/-----[A-Z ]+-----|\s+/g, "");
  return {
    admin: { disabled: true },
    apps: {
      pki: { certificate_authorities: { local: { name: "Local" } } },
      tls: {
        certificates: { load_pem: [{ certificate: pem.cert, key: pem.key, tags: ["t"] }] },
        dns: { name: "challtestsrv", url: "http://127.0.0.1:9" },
        resolvers: ["127.0.0.1:9"],
        automation: {
          policies: [
            { subjects: ["a.example"], issuers: [acme], key_type: "p256" },
            {
              subjects: ["b.example"],
              issuers: [{
                module: "zerossl",
                api_key: "k",
                validity_days: 90,
                cname_validation: dns,
              }],
            },
            {
              subjects: ["c.example"],
              issuers: [{ module: "zerossl", api_key: "k", email: "a@b.c" }],
            },
            {
              subjects: ["d.example"],
              get_certificate: [{ via: "http", url: "http://127.0.0.1:9/cert" }],
              on_demand: true,
            },
            { subjects: ["e.internal"], issuers: [{ module: "internal" }] },
          ],
          on_demand: {
            permission: { module: "http", endpoint: "http://127.0.0.1:9/ask" },
          },
        },
      },
      http: {
        servers: {
          tls0: {
            listen: ["127.0.0.1:2"],
            routes: [],
            tls_connection_policies: [{
              match: { sni: ["a.example"] },
              certificate_selection: { any_tag: ["t"] },
              alpn: ["h2", "http/1.1"],
              protocol_min: "tls1.2",
              client_authentication: {
                ca: {
                  provider: "combined",
                  sources: [
                    { provider: "inline", trusted_ca_certs: [b64] },
                    { provider: "file", pem_files: [] },
                    { provider: "pki_root", authority: ["local"] },
                    { provider: "pki_intermediate", authority: ["local"] },
                    { provider: "storage", pem_keys: [] },
                  ],
                },
                verifiers: [{
                  verifier: "leaf",
                  leaf_certs_loaders: [
                    { loader: "file", files: [] },
                    { loader: "folder", folders: [] },
                    { loader: "pem", certificates: [pem.cert] },
                    { loader: "storage", certificates: [] },
                  ],
                }],
                mode: "require_and_verify",
              },
            }, { client_authentication: { trusted_leaf_certs: [b64] } }],
          },
        },
      },
    },
  };
}

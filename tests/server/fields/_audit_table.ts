/**
 * The field audit's table (see audit.test.ts): for each decoder of the standard modules, the
 * fields it accepts and the test that sets each one and checks its effect or its refusal.
 */

/**
 * A decoder: the test that shows its fields (`test`), per-field exceptions, and the fields it
 * refuses (always, or for the values that cannot run here) — their test shows the refusal.
 */
export interface Decoder {
  test: string;
  fields: string[];
  other?: Record<string, string>;
  refused?: string[];
}

const HEADER_OPS: Decoder = {
  test: "http/handlers.test.ts",
  fields: ["add", "set", "delete", "replace"],
};
const ROUTE: Decoder = {
  test: "http/matchers.test.ts",
  fields: ["group", "match", "handle", "terminal"],
};
const RESPONSE_MATCH: Decoder = {
  test: "parity/handle_response.test.ts",
  fields: ["status_code", "headers"],
};
const ENCODER: Decoder = {
  test: "fields/logging_fields.test.ts",
  fields: [
    "message_key",
    "level_key",
    "time_key",
    "name_key",
    "caller_key",
    "stacktrace_key",
    "line_ending",
    "time_format",
    "time_local",
    "duration_format",
    "level_format",
  ],
  other: { time_format: "logging.test.ts" },
  refused: ["caller_key", "stacktrace_key", "duration_format"],
};
const METRICS: Decoder = {
  test: "fields/misc_fields.test.ts",
  fields: ["per_host", "observe_catchall_hosts", "otlp"],
  other: { otlp: "parity/metrics.test.ts" },
};
const LOG: Decoder = {
  test: "logging.test.ts",
  fields: ["writer", "encoder", "level", "sampling", "include", "exclude"],
};
const FILTER_ACTIONS: Decoder = {
  test: "parity/log_filters.test.ts",
  fields: ["type", "name", "value"],
};

/** Every decoder that uses `checkFields`, by its path (array indexes `[]`, names `*`). */
export const DECODERS: Record<string, Decoder> = {
  "caddy.listeners.http_redirect": {
    test: "fields/wrappers.test.ts",
    fields: ["max_header_bytes"],
  },
  "caddy.listeners.proxy_protocol": {
    test: "fields/wrappers.test.ts",
    fields: ["timeout", "allow", "deny", "fallback_policy"],
  },
  "caddy.logging.encoders.append": {
    test: "parity/log_filters.test.ts",
    fields: ["wrap", "fields"],
  },
  "caddy.logging.encoders.filter": {
    test: "parity/log_filters.test.ts",
    fields: ["wrap", "fields"],
  },
  "caddy.logging.encoders.filter.cookie": {
    test: "parity/log_filters.test.ts",
    fields: ["actions"],
  },
  "caddy.logging.encoders.filter.cookie.actions[]": FILTER_ACTIONS,
  "caddy.logging.encoders.filter.delete": { test: "parity/log_filters.test.ts", fields: [] },
  "caddy.logging.encoders.filter.hash": { test: "parity/log_filters.test.ts", fields: [] },
  "caddy.logging.encoders.filter.ip_mask": {
    test: "parity/log_filters.test.ts",
    fields: ["ipv4_cidr", "ipv6_cidr"],
  },
  "caddy.logging.encoders.filter.multi_regexp": {
    test: "parity/log_filters.test.ts",
    fields: ["operations"],
  },
  "caddy.logging.encoders.filter.multi_regexp.operations[]": {
    test: "parity/log_filters.test.ts",
    fields: ["regexp", "value"],
  },
  "caddy.logging.encoders.filter.query": {
    test: "parity/log_filters.test.ts",
    fields: ["actions"],
  },
  "caddy.logging.encoders.filter.query.actions[]": {
    test: "parity/log_filters.test.ts",
    fields: ["type", "parameter", "value"],
  },
  "caddy.logging.encoders.filter.regexp": {
    test: "parity/log_filters.test.ts",
    fields: ["regexp", "value"],
  },
  "caddy.logging.encoders.filter.rename": { test: "parity/log_filters.test.ts", fields: ["name"] },
  "caddy.logging.encoders.filter.replace": {
    test: "parity/log_filters.test.ts",
    fields: ["value"],
  },
  "caddy.logging.encoders.filter.set_cookie": {
    test: "parity/log_filters.test.ts",
    fields: ["actions"],
  },
  "caddy.logging.encoders.filter.set_cookie.actions[]": FILTER_ACTIONS,
  "caddy.logging.encoders.journald": { test: "parity/log_filters.test.ts", fields: ["wrap"] },
  "caddy.logging.encoders.json": ENCODER,
  "caddy.logging.encoders.console": ENCODER,
  "caddy.logging.writers.discard": { test: "logging.test.ts", fields: [] },
  "caddy.logging.writers.stderr": { test: "logging.test.ts", fields: [] },
  "caddy.logging.writers.stdout": { test: "logging.test.ts", fields: [] },
  "caddy.logging.writers.net": {
    test: "fields/logging_fields.test.ts",
    fields: ["address", "dial_timeout", "soft_start"],
  },
  "caddy.logging.writers.file": {
    test: "fields/logging_fields.test.ts",
    fields: [
      "filename",
      "roll",
      "roll_disabled",
      "roll_size_mb",
      "roll_gzip",
      "roll_local_time",
      "roll_keep",
      "roll_keep_days",
      "roll_compression",
      "roll_interval",
      "roll_at",
      "roll_minutes",
      "mode",
      "dir_mode",
    ],
    other: Object.fromEntries(
      [
        "roll",
        "roll_size_mb",
        "roll_gzip",
        "roll_keep",
        "roll_keep_days",
      ]
        .map((f) => [f, "logging.test.ts"]),
    ),
  },
  // the top level and the admin section, decoded by the engine (lib/server/config/admin.ts)
  "config": { test: "admin_config.test.ts", fields: ["admin", "logging", "storage", "apps"] },
  "admin": {
    test: "admin_config.test.ts",
    fields: ["disabled", "listen", "enforce_origin", "origins", "config", "identity", "remote"],
    refused: ["identity", "remote"],
  },
  "admin.config": {
    test: "admin_config.test.ts",
    fields: ["persist", "load", "load_delay"],
    other: { persist: "admin_api.test.ts" },
    refused: ["load", "load_delay"],
  },
  "logging": { test: "fields/logging_fields.test.ts", fields: ["sink", "logs"], refused: ["sink"] },
  "logging.logs.*": LOG,
  "logging.logs.*.sampling": {
    test: "logging.test.ts",
    fields: ["interval", "first", "thereafter"],
  },
  "http": {
    test: "fields/app_shutdown.test.ts",
    fields: ["http_port", "https_port", "grace_period", "shutdown_delay", "servers", "metrics"],
    other: {
      http_port: "tls/autohttps.test.ts",
      https_port: "tls/autohttps.test.ts",
      metrics: "parity/metrics.test.ts",
    },
  },
  "http.metrics": METRICS,
  "http.servers.*": {
    test: "fields/server_checks.test.ts",
    fields: [
      "listen",
      "listener_wrappers",
      "read_timeout",
      "read_header_timeout",
      "write_timeout",
      "idle_timeout",
      "keepalive_interval",
      "keepalive_idle",
      "keepalive_count",
      "max_header_bytes",
      "enable_full_duplex",
      "expected_underscore_headers",
      "expected_dot_headers",
      "listen_protocols",
      "allow_0rtt",
      "routes",
      "errors",
      "tls_connection_policies",
      "automatic_https",
      "strict_sni_host",
      "trusted_proxies",
      "trusted_proxies_strict",
      "trusted_proxies_unix",
      "client_ip_headers",
      "logs",
      "protocols",
      "experimental_http3",
      "allow_h2c",
      "metrics",
      "named_routes",
      "listener_engine",
    ],
    other: {
      listen: "fields/refusals.test.ts",
      listener_wrappers: "fields/wrappers.test.ts",
      read_timeout: "fields/timeouts.test.ts",
      read_header_timeout: "fields/timeouts.test.ts",
      write_timeout: "fields/timeouts.test.ts",
      idle_timeout: "fields/timeouts.test.ts",
      max_header_bytes: "fields/timeouts.test.ts",
      keepalive_interval: "fields/keepalive.test.ts",
      keepalive_idle: "fields/keepalive.test.ts",
      keepalive_count: "fields/keepalive.test.ts",
      expected_underscore_headers: "../security/header_aliases.test.ts",
      expected_dot_headers: "../security/header_aliases.test.ts",
      listen_protocols: "fields/protocols.test.ts",
      protocols: "fields/protocols.test.ts",
      allow_0rtt: "fields/refusals.test.ts",
      experimental_http3: "fields/refusals.test.ts",
      allow_h2c: "fields/refusals.test.ts",
      routes: "fields/wrappers.test.ts",
      errors: "http/handlers.test.ts",
      tls_connection_policies: "http/tls.test.ts",
      automatic_https: "tls/autohttps.test.ts",
      trusted_proxies_unix: "parity/proxy_fields.test.ts",
      logs: "http/access_log.test.ts",
      metrics: "parity/metrics.test.ts",
      named_routes: "parity/invoke.test.ts",
      listener_engine: "http/node_engine.test.ts",
    },
    refused: ["allow_0rtt", "experimental_http3", "allow_h2c"],
  },
  "http.servers.*.errors": { test: "http/handlers.test.ts", fields: ["routes"] },
  "http.servers.*.logs": {
    test: "http/access_log.test.ts",
    fields: [
      "default_logger_name",
      "logger_names",
      "skip_hosts",
      "skip_unmapped_hosts",
      "should_log_credentials",
    ],
    other: {
      skip_unmapped_hosts: "fields/misc_fields.test.ts",
      should_log_credentials: "parity/log_filters.test.ts",
    },
  },
  "http.servers.*.metrics": {
    ...METRICS,
    other: { otlp: "parity/metrics.test.ts", per_host: "parity/metrics.test.ts" },
  },
  "http.servers.*.routes[]": ROUTE,
  "http.servers.*.named_routes.*[]": ROUTE,
  "http.ip_sources.static": { test: "fields/server_checks.test.ts", fields: ["ranges"] },
  "http.handlers.authentication": { test: "http/handlers.test.ts", fields: ["providers"] },
  "http.handlers.authentication.providers.http_basic": {
    test: "http/handlers.test.ts",
    fields: ["accounts", "hash", "realm", "hash_cache"],
    other: { hash_cache: "fields/misc_fields.test.ts" },
  },
  "http.handlers.authentication.providers.http_basic.accounts": {
    test: "http/handlers.test.ts",
    fields: ["username", "password", "salt"],
    other: { salt: "hash_password.test.ts" },
  },
  "http.handlers.authentication.providers.http_basic.hash": {
    test: "http/handlers.test.ts",
    fields: ["algorithm"],
  },
  "http.handlers.copy_response": {
    test: "parity/handle_response.test.ts",
    fields: ["status_code"],
  },
  "http.handlers.copy_response_headers": {
    test: "parity/handle_response.test.ts",
    fields: ["include", "exclude"],
    other: { exclude: "fields/proxy_misc.test.ts" },
  },
  "http.handlers.encode": {
    test: "http/handlers.test.ts",
    fields: ["encodings", "prefer", "minimum_length", "match"],
  },
  "http.handlers.encode.encodings.gzip": { test: "fields/misc_fields.test.ts", fields: ["level"] },
  "http.handlers.encode.encodings.zstd": {
    test: "fields/misc_fields.test.ts",
    fields: ["level", "checksum"],
    other: { checksum: "fields/zstd_checksum.test.ts" },
  },
  "http.handlers.encode.match": { ...RESPONSE_MATCH, test: "http/handlers.test.ts" },
  "http.handlers.error": { test: "http/handlers.test.ts", fields: ["error", "status_code"] },
  "http.handlers.file_server": {
    test: "http/file_server.test.ts",
    fields: [
      "fs",
      "root",
      "hide",
      "index_names",
      "browse",
      "canonical_uris",
      "status_code",
      "pass_thru",
      "precompressed",
      "precompressed_order",
      "hide_dotfiles",
      "etag_file_extensions",
    ],
    other: {
      fs: "fields/misc_fields.test.ts",
      hide_dotfiles: "http/file_server_hardening.test.ts",
      pass_thru: "http/file_server_hardening.test.ts",
      etag_file_extensions: "parity/file_server_fields.test.ts",
    },
  },
  "http.handlers.file_server.browse": {
    test: "http/file_server.test.ts",
    fields: ["template_file", "reveal_symlinks", "file_limit", "sort"],
    other: {
      template_file: "fields/misc_fields.test.ts",
      file_limit: "parity/file_server_fields.test.ts",
    },
  },
  "http.handlers.headers": { test: "http/handlers.test.ts", fields: ["request", "response"] },
  "http.handlers.rate_limit": {
    test: "http/rate_limit.test.ts",
    fields: [
      "rate_limits",
      "jitter",
      "sweep_interval",
      "distributed",
      "storage",
      "log_key",
      "disable_metrics",
    ],
    other: {
      distributed: "http/rate_limit_distributed.test.ts",
      storage: "http/rate_limit_distributed.test.ts",
      disable_metrics: "gatehousefile/rate_limit.test.ts",
    },
  },
  "http.handlers.rate_limit.rate_limits.z": {
    test: "http/rate_limit.test.ts",
    fields: ["match", "key", "max_events", "window", "ipv4_prefix", "ipv6_prefix"],
  },
  "http.handlers.rate_limit.distributed": {
    test: "http/rate_limit_distributed.test.ts",
    fields: ["write_interval", "read_interval", "purge_age"],
  },
  "http.handlers.headers.request": HEADER_OPS,
  "http.handlers.headers.request.replace.*": {
    test: "http/handlers.test.ts",
    fields: ["search", "search_regexp", "replace"],
  },
  "http.handlers.headers.response": HEADER_OPS,
  "http.handlers.headers.response.require": { ...RESPONSE_MATCH, test: "http/handlers.test.ts" },
  "http.handlers.push": { test: "parity2/push.test.ts", fields: ["resources", "headers"] },
  "http.handlers.push.resources[]": { test: "parity2/push.test.ts", fields: ["method", "target"] },
  "http.handlers.push.headers": { ...HEADER_OPS, test: "parity2/_push.ts" },
  "http.handlers.intercept": {
    test: "parity/handle_response.test.ts",
    fields: ["handle_response"],
  },
  "http.handlers.intercept.handle_response[]": {
    test: "parity/handle_response.test.ts",
    fields: ["match", "status_code", "routes"],
  },
  "http.handlers.intercept.handle_response[].match": RESPONSE_MATCH,
  "http.handlers.invoke": { test: "parity/invoke.test.ts", fields: ["name"] },
  "http.handlers.log_append": {
    test: "parity/log_append.test.ts",
    fields: ["key", "value", "early"],
  },
  "http.handlers.map": {
    test: "http/handlers.test.ts",
    fields: ["source", "destinations", "mappings", "defaults"],
  },
  "http.handlers.map.mappings[]": {
    test: "http/handlers.test.ts",
    fields: ["input", "input_regexp", "outputs"],
  },
  "http.handlers.metrics": { test: "fields/misc_fields.test.ts", fields: ["disable_openmetrics"] },
  "http.handlers.request_body": { test: "http/handlers.test.ts", fields: ["max_size"] },
  "http.handlers.reverse_proxy": {
    test: "http/reverse_proxy.test.ts",
    fields: [
      "transport",
      "circuit_breaker",
      "load_balancing",
      "health_checks",
      "upstreams",
      "dynamic_upstreams",
      "flush_interval",
      "trusted_proxies",
      "headers",
      "buffer_requests",
      "buffer_responses",
      "max_buffer_size",
      "request_buffers",
      "response_buffers",
      "stream_timeout",
      "stream_close_delay",
      "stream_buffer_size",
      "handle_response",
      "rewrite",
    ],
    other: {
      transport: "fields/transport.test.ts",
      circuit_breaker: "fields/refusals.test.ts",
      // flush_interval: responses are flushed chunk by chunk as they arrive, within any interval
      flush_interval: "fields/server_checks.test.ts",
      buffer_requests: "fields/proxy_misc.test.ts",
      buffer_responses: "fields/proxy_misc.test.ts",
      max_buffer_size: "fields/proxy_misc.test.ts",
      request_buffers: "parity/proxy_fields.test.ts",
      response_buffers: "parity/proxy_fields.test.ts",
      stream_timeout: "parity/proxy_fields.test.ts",
      stream_close_delay: "parity/proxy_fields.test.ts",
      stream_buffer_size: "parity/proxy_fields.test.ts",
      handle_response: "parity/handle_response.test.ts",
      rewrite: "parity/handle_response.test.ts",
      dynamic_upstreams: "parity2/dynamic_upstreams.test.ts",
    },
    refused: ["circuit_breaker"],
  },
  "http.handlers.reverse_proxy.handle_response[]": {
    test: "parity/handle_response.test.ts",
    fields: ["match", "status_code", "routes"],
  },
  "http.handlers.reverse_proxy.handle_response[].match": RESPONSE_MATCH,
  "http.handlers.reverse_proxy.headers": {
    test: "http/reverse_proxy.test.ts",
    fields: ["request", "response"],
  },
  // the header operations of the headers handler: one decoder and code (header_ops.ts)
  "http.handlers.reverse_proxy.headers.request": HEADER_OPS,
  "http.handlers.reverse_proxy.headers.response": HEADER_OPS,
  "http.handlers.reverse_proxy.health_checks": {
    test: "http/reverse_proxy.test.ts",
    fields: ["active", "passive"],
  },
  "http.handlers.reverse_proxy.health_checks.active": {
    test: "http/reverse_proxy.test.ts",
    fields: [
      "uri",
      "path",
      "port",
      "headers",
      "method",
      "body",
      "interval",
      "timeout",
      "max_size",
      "expect_status",
      "expect_body",
      "passes",
      "fails",
    ],
    other: {
      passes: "fields/health.test.ts",
      fails: "fields/health.test.ts",
      max_size: "fields/health.test.ts",
    },
  },
  "http.handlers.reverse_proxy.health_checks.passive": {
    test: "http/reverse_proxy.test.ts",
    fields: [
      "fail_duration",
      "max_fails",
      "unhealthy_request_count",
      "unhealthy_status",
      "unhealthy_latency",
    ],
  },
  "http.handlers.reverse_proxy.load_balancing": {
    test: "http/reverse_proxy.test.ts",
    fields: ["selection_policy", "retries", "try_duration", "try_interval", "retry_match"],
  },
  "http.handlers.reverse_proxy.transport": {
    test: "fields/transport.test.ts",
    fields: [
      "protocol",
      "local_address",
      "network_proxy",
      "tls",
      "dial_timeout",
      "response_header_timeout",
      "compression",
      "versions",
      "keep_alive",
      "max_conns_per_host",
      "max_response_header_size",
      "read_buffer_size",
      "resolver",
      "dial_fallback_delay",
      "expect_continue_timeout",
      "write_buffer_size",
      // the fastcgi transport's own fields (protocol "fastcgi"; same path, another decoder)
      "root",
      "split_path",
      "resolve_root_symlink",
      "env",
      "read_timeout",
      "write_timeout",
      "capture_stderr",
    ],
    other: {
      root: "parity2/fastcgi_php.test.ts",
      split_path: "parity2/fastcgi_php.test.ts",
      resolve_root_symlink: "parity2/fastcgi_php.test.ts",
      env: "parity2/fastcgi_php.test.ts",
      read_timeout: "parity2/fastcgi_php.test.ts",
      write_timeout: "fields/new_modules.test.ts",
      capture_stderr: "parity2/fastcgi_php.test.ts",
      local_address: "parity/proxy_fields.test.ts",
      network_proxy: "parity/proxy_fields.test.ts",
      dial_timeout: "parity/proxy_fields.test.ts",
      response_header_timeout: "http/reverse_proxy.test.ts",
      compression: "parity/proxy_fields.test.ts",
      versions: "parity/proxy_fields.test.ts",
      expect_continue_timeout: "parity2/proxy_transport_h1.test.ts",
      write_buffer_size: "parity2/proxy_transport_h1.test.ts",
    },
  },
  "http.handlers.reverse_proxy.transport.keep_alive": {
    test: "fields/transport.test.ts",
    fields: [
      "enabled",
      "probe_interval",
      "max_idle_conns",
      "max_idle_conns_per_host",
      "idle_timeout",
    ],
  },
  "http.handlers.reverse_proxy.transport.network_proxy": {
    test: "parity/proxy_fields.test.ts",
    fields: ["from", "url"],
  },
  "http.handlers.reverse_proxy.transport.resolver": {
    test: "fields/refusals.test.ts",
    fields: ["addresses"],
  },
  "http.handlers.reverse_proxy.transport.tls": {
    test: "parity/proxy_fields.test.ts",
    fields: [
      "insecure_skip_verify",
      "server_name",
      "ca",
      "root_ca_pool",
      "root_ca_pem_files",
      "renegotiation",
      "except_ports",
    ],
    other: {
      root_ca_pem_files: "fields/proxy_misc.test.ts",
      except_ports: "fields/transport.test.ts",
      insecure_skip_verify: "http/upstream_hostile.test.ts",
      server_name: "parity/proxy_fields.test.ts",
      renegotiation: "parity2/proxy_renegotiation.test.ts",
    },
  },
  "http.handlers.reverse_proxy.transport.tls.ca": {
    test: "parity/proxy_fields.test.ts",
    fields: ["provider", "trusted_ca_certs", "trusted_ca_certs_pem_files"],
    other: { trusted_ca_certs_pem_files: "fields/proxy_misc.test.ts" },
  },
  "http.handlers.reverse_proxy.dynamic_upstreams": {
    test: "parity2/dynamic_upstreams.test.ts",
    fields: ["source", "sources"],
  },
  // the `a` and `srv` sources (one path, two decoders)
  "http.handlers.reverse_proxy.dynamic_upstreams.sources[]": {
    test: "parity2/dynamic_upstreams.test.ts",
    fields: [
      "source",
      "name",
      "port",
      "refresh",
      "resolver",
      "dial_timeout",
      "dial_fallback_delay",
      "versions",
      "service",
      "proto",
      "grace_period",
      "dial_network",
    ],
    // dial_fallback_delay: as in Caddy, it races TCP dials; lookups are UDP, so it never applies
    other: { dial_fallback_delay: "fields/new_modules.test.ts" },
  },
  "http.handlers.reverse_proxy.dynamic_upstreams.sources[].versions": {
    test: "parity2/dynamic_upstreams.test.ts",
    fields: ["ipv4", "ipv6"],
    other: { ipv6: "fields/new_modules.test.ts" },
  },
  "http.handlers.acme_server": {
    test: "parity2/acme_server.test.ts",
    fields: [
      "ca",
      "lifetime",
      "host",
      "path_prefix",
      "sign_with_root",
      "resolvers",
      "challenges",
      "policy",
    ],
    other: { host: "fields/new_modules.test.ts" },
  },
  "http.handlers.acme_server.policy": {
    test: "parity2/acme_server.test.ts",
    fields: ["allow", "deny", "allow_wildcard_names"],
    other: { allow_wildcard_names: "fields/new_modules.test.ts" },
  },
  "http.handlers.acme_server.policy.allow": {
    test: "parity2/acme_server.test.ts",
    fields: ["domains", "ip_ranges"],
  },
  "http.handlers.acme_server.policy.deny": {
    test: "parity2/acme_server.test.ts",
    fields: ["domains", "ip_ranges"],
  },
  "http.handlers.reverse_proxy.upstreams": {
    test: "http/reverse_proxy.test.ts",
    fields: ["dial", "max_requests"],
  },
  "http.handlers.rewrite": {
    test: "http/handlers.test.ts",
    fields: [
      "method",
      "uri",
      "strip_path_prefix",
      "strip_path_suffix",
      "uri_substring",
      "path_regexp",
      "query",
    ],
  },
  "http.handlers.rewrite.query": {
    test: "http/handlers.test.ts",
    fields: ["rename", "set", "add", "replace", "delete"],
  },
  "http.handlers.static_response": {
    test: "http/handlers.test.ts",
    fields: ["status_code", "headers", "body", "close", "abort"],
  },
  "http.handlers.subroute": { test: "http/handlers.test.ts", fields: ["routes", "errors"] },
  "http.handlers.subroute.errors": { test: "http/handlers.test.ts", fields: ["routes"] },
  "http.handlers.tracing": { test: "parity/tracing.test.ts", fields: ["span", "span_attributes"] },
  "tls": {
    test: "acme/dns01.test.ts",
    fields: [
      "certificates",
      "automation",
      "session_tickets",
      "disable_ocsp_stapling",
      "dns",
      "resolvers",
      "disable_storage_check",
      "disable_storage_clean",
    ],
    other: {
      certificates: "http/tls.test.ts",
      session_tickets: "fields/refusals.test.ts",
      disable_ocsp_stapling: "fields/refusals.test.ts",
      disable_storage_check: "tls/storage_upkeep.test.ts",
      disable_storage_clean: "tls/storage_upkeep.test.ts",
    },
    refused: ["session_tickets"],
  },
  "tls.certificates.load_pem[]": {
    test: "http/tls.test.ts",
    fields: ["certificate", "key", "tags"],
  },
  "tls.automation": {
    test: "tls/storage_upkeep.test.ts",
    fields: ["policies", "renew_interval", "on_demand", "storage_clean_interval", "ocsp_interval"],
    other: {
      policies: "acme/dns01.test.ts",
      renew_interval: "tls/reload.test.ts",
      on_demand: "acme/on_demand.test.ts",
      ocsp_interval: "fields/tls_fields.test.ts",
    },
    refused: ["ocsp_interval"],
  },
  "tls.automation.policies[]": {
    test: "acme/server.test.ts",
    fields: [
      "subjects",
      "issuers",
      "renewal_window_ratio",
      "key_type",
      "storage",
      "disable_ocsp_stapling",
      "on_demand",
      "get_certificate",
      "must_staple",
      "ocsp_overrides",
    ],
    other: {
      key_type: "tls/key_types.test.ts",
      disable_ocsp_stapling: "fields/refusals.test.ts",
      on_demand: "acme/on_demand.test.ts",
      get_certificate: "tls/cert_managers.test.ts",
      must_staple: "fields/tls_fields.test.ts",
      ocsp_overrides: "fields/tls_fields.test.ts",
    },
    refused: ["must_staple", "ocsp_overrides"],
  },
  "tls.automation.on_demand": {
    test: "acme/on_demand.test.ts",
    fields: ["ask", "permission", "rate_limit"],
  },
  "tls.automation.on_demand.permission": {
    test: "acme/on_demand.test.ts",
    fields: ["module", "endpoint"],
  },
  // every issuer decodes at "issuer": acme, and zerossl in its REST API and ACME forms
  "issuer": {
    test: "acme/config.test.ts",
    fields: [
      "module",
      "ca",
      "test_ca",
      "email",
      "account_key",
      "external_account",
      "acme_timeout",
      "challenges",
      "trusted_roots_pem_files",
      "preferred_chains",
      "api_key",
      "api_url",
      "validity_days",
      "listen_host",
      "alternate_http_port",
      "cname_validation",
    ],
    other: Object.fromEntries(
      ["api_key", "api_url", "validity_days", "listen_host", "alternate_http_port"]
        .map((f) => [f, "acme/zerossl_api.test.ts"]).concat([
          ["cname_validation", "acme/zerossl_api.test.ts"],
        ]),
    ),
  },
  "issuer.external_account": { test: "acme/issuer.test.ts", fields: ["key_id", "mac_key"] },
  "issuer.challenges": {
    test: "acme/issuer.test.ts",
    fields: ["http", "tls-alpn", "dns", "bind_host"],
    other: { dns: "acme/dns01.test.ts" },
  },
  "issuer.challenges.http": { test: "acme/issuer.test.ts", fields: ["disabled", "alternate_port"] },
  "issuer.challenges.tls-alpn": {
    test: "acme/issuer.test.ts",
    fields: ["disabled", "alternate_port"],
  },
  "issuer.challenges.dns": {
    test: "acme/config.test.ts",
    fields: [
      "provider",
      "ttl",
      "propagation_delay",
      "propagation_timeout",
      "resolvers",
      "override_domain",
    ],
  },
  "issuer.cname_validation": {
    test: "acme/zerossl_config.test.ts",
    fields: [
      "provider",
      "ttl",
      "propagation_delay",
      "propagation_timeout",
      "resolvers",
      "override_domain",
    ],
    other: { propagation_delay: "acme/config.test.ts" },
  },
  "issuer.preferred_chains": {
    test: "acme/chains.test.ts",
    fields: ["smallest", "root_common_name", "any_common_name"],
  },
  "dns.providers.mock": { test: "tls/dns.test.ts", fields: ["argument"] },
  "dns.providers.challtestsrv": { test: "acme/dns01.test.ts", fields: ["url"] },
  "tls.get_certificate.http": { test: "tls/cert_managers.test.ts", fields: ["url"] },
  "http.servers.*.tls_connection_policies[]": {
    test: "http/tls.test.ts",
    fields: [
      "match",
      "certificate_selection",
      "alpn",
      "protocol_min",
      "protocol_max",
      "default_sni",
      "fallback_sni",
      "client_authentication",
    ],
    other: {
      default_sni: "fields/tls_fields.test.ts",
      fallback_sni: "fields/tls_fields.test.ts",
      client_authentication: "parity2/mtls.test.ts",
    },
  },
  "http.servers.*.tls_connection_policies[].client_authentication": {
    test: "parity2/mtls.test.ts",
    fields: [
      "ca",
      "trusted_ca_certs",
      "trusted_ca_certs_pem_files",
      "trusted_leaf_certs",
      "verifiers",
      "mode",
    ],
    other: {
      trusted_ca_certs: "parity2/network_property.test.ts",
      trusted_ca_certs_pem_files: "fields/tls_fields.test.ts",
    },
  },
  "http.servers.*.tls_connection_policies[].client_authentication.ca": {
    test: "parity2/mtls.test.ts",
    fields: ["provider", "sources"],
  },
  // the trust pool providers: inline, file, pki_root, pki_intermediate, storage, system, combined
  "http.servers.*.tls_connection_policies[].client_authentication.ca.sources[]": {
    test: "parity2/mtls.test.ts",
    fields: [
      "provider",
      "trusted_ca_certs",
      "trusted_ca_certs_pem_files",
      "pem_files",
      "authority",
      "pem_keys",
      "storage",
    ],
    other: {
      trusted_ca_certs_pem_files: "fields/proxy_misc.test.ts",
      pem_keys: "fields/tls_fields.test.ts",
      storage: "fields/new_modules.test.ts",
    },
    refused: ["storage"],
  },
  "http.servers.*.tls_connection_policies[].client_authentication.verifiers[]": {
    test: "parity2/mtls.test.ts",
    fields: ["verifier", "leaf_certs_loaders"],
  },
  // the leaf loaders: file, folder, pem, storage
  "http.servers.*.tls_connection_policies[].client_authentication.verifiers[].leaf_certs_loaders[]":
    {
      test: "parity2/mtls.test.ts",
      fields: ["loader", "files", "folders", "certificates", "storage"],
      other: { files: "fields/tls_fields.test.ts", storage: "fields/new_modules.test.ts" },
      refused: ["storage"],
    },
  "http.matchers.client_ip": { test: "http/matchers.test.ts", fields: ["ranges"] },
  "http.matchers.remote_ip": {
    test: "http/matchers.test.ts",
    fields: ["ranges", "forwarded"],
    other: { forwarded: "fields/misc_fields.test.ts" },
  },
  "http.matchers.file": {
    test: "parity/file_matcher.test.ts",
    fields: ["fs", "root", "try_files", "try_policy", "split_path"],
  },
  "http.matchers.url_pattern": {
    test: "parity/url_pattern.test.ts",
    fields: ["pattern", "base_url", "ignore_case"],
  },
};

/** Modules whose decoder reports its fields at another path than the module's id. */
export const DECODED_AT: Record<string, string> = {
  "tls.issuance.acme": "issuer",
  "tls.issuance.zerossl": "issuer",
};

/** Modules whose config is not an object of fields, or that have no config. */
export const WITHOUT_FIELDS: Record<string, string> = {
  "admin.api.metrics": "an admin endpoint; no config",
  "admin.api.pki": "an admin endpoint; no config",
  "admin.api.reverse_proxy": "an admin endpoint; no config",
  "admin.api.tls_revoke": "an admin endpoint; no config",
  "caddy.adapters.gatehousefile": "a config adapter; no config",
  "caddy.adapters.json5": "a config adapter; no config",
  "caddy.listeners.tls": "a marker; only its `wrapper` key (tests/server/fields/refusals.test.ts)",
  "http.handlers.vars": "its keys are the variables it sets (tests/server/http/handlers.test.ts)",
  "http.matchers.host": "a list of hosts",
  "http.matchers.method": "a list of methods",
  "http.matchers.path": "a list of paths",
  "http.matchers.path_regexp": "name and pattern (tests/server/http/matchers.test.ts)",
  "http.matchers.header": "a map of header fields",
  "http.matchers.header_regexp": "a map of header fields",
  "http.matchers.query": "a map of query keys",
  "http.matchers.protocol": "a protocol name",
  "http.matchers.not": "a list of matcher sets",
  "http.matchers.vars": "a map of variables",
  "http.matchers.vars_regexp": "a map of variables",
  "http.matchers.expression": "a CEL expression",
};

/** Modules with decoders of their own (not `checkFields`): their fields and where they are shown. */
export const OWN_DECODERS: Record<
  string,
  { fields: string[]; test: string; other?: Record<string, string>; bogus: unknown }
> = {
  "tls.issuance.internal": {
    fields: ["ca", "lifetime", "sign_with_root"],
    test: "tls/",
    other: { sign_with_root: "fields/misc_fields.test.ts" },
    bogus: {
      apps: {
        tls: { automation: { policies: [{ issuers: [{ module: "internal", bogus_field: 1 }] }] } },
      },
    },
  },
  "pki": {
    fields: ["certificate_authorities"],
    test: "pki/",
    bogus: { apps: { pki: { bogus_field: 1 } } },
  },
  "caddy.storage.file_system": {
    fields: ["root"],
    test: "storage.test.ts",
    bogus: { storage: { module: "file_system", root: "/tmp/x", bogus_field: 1 } },
  },
  "caddy.storage.libsql": {
    fields: ["url", "auth_token", "prefix"],
    test: "storage.test.ts",
    bogus: { storage: { module: "libsql", url: "file:/tmp/x.db", bogus_field: 1 } },
  },
};

/**
 * The access log: per-server `logs` config (logger names by host, skipped hosts, credential
 * logging) and the `handled request` record, field by field as Caddy writes it. Credentials
 * (`Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`) are logged as empty lists
 * unless `should_log_credentials` is set.
 *
 * @module
 */
import { clientLogFields } from "./tls_client.ts";
import type { LogFields, Logger } from "../module/instance.ts";
import type { Decoder } from "../config/decode.ts";
import { type RequestContext, splitHostPort } from "./context.ts";
import { requestProto } from "../module/listener.ts";

/** Parsed `logs` section of a server. */
export interface ServerLogConfig {
  /** Logger name used for hosts not in `logger_names`. */
  defaultLoggerName: string;
  /** Host (or wildcard host) to logger names. */
  loggerNames: Map<string, string[]>;
  /** Hosts whose requests are not logged. */
  skipHosts: Set<string>;
  /** Do not log hosts missing from `logger_names`. */
  skipUnmappedHosts: boolean;
  /** Log credentials as they are. */
  shouldLogCredentials: boolean;
}

/** The fields of a server's `logs` (Caddy's `ServerLogConfig`, `modules/caddyhttp/logging.go`). */
export const SERVER_LOGS_FIELDS: readonly string[] = [
  "default_logger_name",
  "logger_names",
  "skip_hosts",
  "skip_unmapped_hosts",
  "should_log_credentials",
];

/** Decodes a server's `logs` object (its decoder `d`, at `http.servers.<name>.logs`). */
export function parseLogConfig(d: Decoder): ServerLogConfig {
  d.fields(SERVER_LOGS_FIELDS);
  const names = new Map<string, string[]>();
  for (const [host, v] of Object.entries(d.rawObject("logger_names") ?? {})) {
    names.set(host.toLowerCase(), Array.isArray(v) ? v.map(String) : [String(v)]);
  }
  return {
    defaultLoggerName: d.string("default_logger_name") ?? "",
    loggerNames: names,
    skipHosts: new Set((d.strings("skip_hosts") ?? []).map((h) => h.toLowerCase())),
    skipUnmappedHosts: d.bool("skip_unmapped_hosts") ?? false,
    shouldLogCredentials: d.bool("should_log_credentials") ?? false,
  };
}

function lookupNames(cfg: ServerLogConfig, host: string): string[] | undefined {
  const h = host.toLowerCase();
  const direct = cfg.loggerNames.get(h) ?? cfg.loggerNames.get(splitHostPort(h)[0]);
  if (direct) return direct;
  const labels = splitHostPort(h)[0].split(".");
  for (let i = 0; i < labels.length; i++) {
    if (!labels[i]) continue;
    labels[i] = "*";
    const found = cfg.loggerNames.get(labels.join("."));
    if (found) return found;
  }
  return undefined;
}

/** True when this request should be logged (Caddy's `shouldLogRequest`). */
export function shouldLog(cfg: ServerLogConfig, c: RequestContext): boolean {
  const host = c.hostname.toLowerCase();
  if (cfg.loggerNames.has(host)) return true;
  if (cfg.skipHosts.has(host)) return false;
  if (cfg.skipUnmappedHosts && !lookupNames(cfg, c.host)) return false;
  return true;
}

/** The access loggers for a request: `http.log.access` named by `logger_names`. */
export function accessLoggers(cfg: ServerLogConfig, base: Logger, c: RequestContext): Logger[] {
  const names = lookupNames(cfg, c.host);
  if (names && names.length) return names.map((n) => n ? base.named(n) : base);
  return [cfg.defaultLoggerName ? base.named(cfg.defaultLoggerName) : base];
}

/** Go's canonical header key: `content-type` becomes `Content-Type`. */
export function canonicalHeaderKey(name: string): string {
  let out = "";
  let upper = true;
  for (const ch of name) {
    out += upper ? ch.toUpperCase() : ch.toLowerCase();
    upper = ch === "-";
  }
  return out;
}

const CREDENTIALS = new Set(["cookie", "set-cookie", "authorization", "proxy-authorization"]);

/** Headers as a log map `Name -> [values]`, credentials emptied unless allowed. */
export function loggableHeaders(
  headers: Headers,
  logCredentials: boolean,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of headers) {
    if (k === "set-cookie") continue;
    const key = canonicalHeaderKey(k);
    out[key] = !logCredentials && CREDENTIALS.has(k) ? [] : [v];
  }
  const cookies = headers.getSetCookie();
  if (cookies.length) out["Set-Cookie"] = logCredentials ? cookies : [];
  return out;
}

/** The `request` object of log records. */
export function loggableRequest(c: RequestContext, logCredentials: boolean): LogFields {
  const req: LogFields = {
    remote_ip: c.remoteHost,
    remote_port: c.remotePort,
    client_ip: c.clientIP,
    proto: requestProto(c.info),
    method: c.origMethod,
    host: c.host,
    uri: c.origQuery ? `${c.origRawPath}?${c.origQuery}` : c.origRawPath,
    headers: loggableHeaders(c.request.headers, logCredentials),
  };
  const tls = c.info.tls;
  if (tls) {
    req.tls = {
      resumed: !!tls.resumed,
      version: tls.version ?? 0,
      cipher_suite: tls.cipherSuite ?? 0,
      proto: tls.proto ?? "",
      server_name: tls.serverName ?? "",
    };
    const client = tls.clientCertificates?.[0];
    if (client) Object.assign(req.tls as object, clientLogFields(client));
  }
  return req;
}

/** One handled request, as {@linkcode logHandledRequest} logs it. */
export interface HandledRequest {
  /** The access loggers of the request ({@linkcode accessLoggers}). */
  loggers: Logger[];
  /** The request. */
  c: RequestContext;
  /** The answer: its status and header fields. */
  res: { status: number; headers: Headers };
  /** Bytes of body sent (counted while the body streams). */
  size: number;
  /** Log credentials as they are (`should_log_credentials`). */
  logCredentials: boolean;
}

/**
 * Emits the `handled request` record to each logger (ERROR level for status >= 400); the
 * duration runs from the request's start until now.
 */
export function logHandledRequest(r: HandledRequest): void {
  const { c, res, logCredentials } = r;
  const durationMs = performance.now() - c.start;
  const fields: LogFields = {
    request: loggableRequest(c, logCredentials),
    bytes_read: c.bytesRead,
    user_id: c.userId,
    duration: durationMs / 1000,
    size: r.size,
    status: res.status,
    resp_headers: loggableHeaders(res.headers, logCredentials),
  };
  if (c.logFields !== null) { for (const [k, v] of c.logFields) fields[k] = v; }
  for (const l of r.loggers) {
    if (res.status >= 400) l.error("handled request", fields);
    else l.info("handled request", fields);
  }
}

/**
 * `gatehouse respond`: a hard-coded HTTP server. The last unnamed argument is the status when
 * it is three digits, else the body; flags win. The body may come from `--body`, the argument
 * or piped stdin, and may use `{{.N}}` (server number), `{{.Port}}` and `{{.Address}}`. A
 * port range in `--listen` starts one server per port. Listen addresses are printed.
 *
 * @module
 */
import { type Command, defineCommand, ExitCode } from "./command.ts";
import { expandListenAddress } from "../server/http/listen_address.ts";
import { debugLogging, NO_ADMIN, parseHeaderFlags, runQuickServer } from "./quick_server.ts";
import { UsageError } from "./usage_error.ts";
import { WORKERS_FLAG } from "./workers.ts";

/** Fills `{{.N}}`, `{{.Port}}`, `{{.Address}}` (spaces inside the braces allowed). */
export function renderRespondBody(body: string, n: number, port: number, address: string): string {
  return body.replace(
    /\{\{\s*\.(N|Port|Address)\s*\}\}/g,
    (_m, k: string) => k === "N" ? String(n) : k === "Port" ? String(port) : address,
  );
}

/** Builds the config `respond` runs. */
export function respondConfig(opts: {
  listen: string;
  status: number;
  body: string;
  headers: Record<string, string[]>;
  accessLog: boolean;
  debug: boolean;
}): Record<string, unknown> {
  const addrs = expandListenAddress(opts.listen, 0);
  const servers: Record<string, unknown> = {};
  addrs.forEach((a, i) => {
    const port = Number(/:(\d+)$/.exec(a.address)?.[1] ?? 0);
    servers[`static${i}`] = {
      listen: [a.address],
      read_header_timeout: "10s",
      idle_timeout: "30s",
      max_header_bytes: 10240,
      routes: [{
        handle: [{
          handler: "static_response",
          status_code: String(opts.status),
          ...(Object.keys(opts.headers).length ? { headers: opts.headers } : {}),
          ...(opts.body ? { body: renderRespondBody(opts.body, i, port, a.address) } : {}),
        }],
      }],
      automatic_https: { disable_redirects: true },
      ...(opts.accessLog ? { logs: {} } : {}),
    };
  });
  return { ...NO_ADMIN, apps: { http: { servers } }, ...debugLogging(opts.debug) };
}

async function readPipedStdin(): Promise<string> {
  if (Deno.stdin.isTerminal()) return "";
  try {
    const st = await Deno.stat("/dev/stdin");
    if (!st.isFifo && !st.isFile) return "";
  } catch {
    return "";
  }
  return await new Response(Deno.stdin.readable).text();
}

/** `respond`. */
export const respondCommand: Command = defineCommand({
  name: "respond",
  usage:
    '[--status <code>] [--body <content>] [--listen <addr>] [--access-log] [--header "Field: value"] [--debug] [--workers <n>] <body|status>',
  short: "Simple, hard-coded HTTP responses for development and testing",
  long: [
    "Starts one or more servers that answer every request with a fixed response. Without",
    "options: a random free port, status 200, empty body; the address is printed. The last",
    "unnamed argument is a status code when it has three digits, otherwise the body; flags",
    "override it. The body may also be piped on stdin. A port range in --listen starts one",
    "server per port; the body may use {{.N}} (server number), {{.Port}} and {{.Address}}.",
  ].join("\n"),
  flags: [
    {
      name: "status",
      short: "s",
      type: "string",
      value: "<code>",
      help: "The response status code",
      default: "200",
    },
    {
      name: "header",
      short: "H",
      type: "string",
      multiple: true,
      value: '"Field: value"',
      help: "Set a header on the response (repeatable)",
    },
    {
      name: "body",
      short: "b",
      type: "string",
      value: "<content>",
      help: "The body of the response",
    },
    {
      name: "listen",
      short: "l",
      type: "string",
      value: "<addr>",
      help: "The address to listen on (may be a port range)",
      default: "localhost:0",
    },
    { name: "access-log", type: "boolean", help: "Enable the access log" },
    WORKERS_FLAG,
    { name: "debug", short: "v", type: "boolean", help: "Enable more verbose debug-level logging" },
  ],
  async run({ flags, args }) {
    if (args.length > 1) throw new UsageError("respond: too many unflagged arguments");
    const statusGiven = Deno.args.includes("--status") || Deno.args.includes("-s") ||
      Deno.args.some((a) => a.startsWith("--status="));
    let status = Number(flags.status ?? "200");
    let body = typeof flags.body === "string" ? flags.body : "";
    const arg = args[0];
    if (arg !== undefined && arg !== "") {
      if (body && statusGiven) {
        throw new UsageError(`respond: unflagged argument "${arg}" is overridden by flags`);
      }
      if (/^\d{3}$/.test(arg) && !statusGiven) status = Number(arg);
      else if (!/^\d+$/.test(arg) && !body) body = arg;
    }
    if (!body) body = await readPipedStdin();
    if (!Number.isInteger(status) || status < 100 || status > 999) {
      throw new UsageError(`respond: invalid status code ${flags.status}`);
    }
    const headers = parseHeaderFlags(flags.header ?? [], "header");
    const config = respondConfig({
      listen: String(flags.listen ?? "localhost:0"),
      status,
      body,
      headers,
      accessLog: !!flags["access-log"],
      debug: !!flags.debug,
    });
    return await runQuickServer(
      config,
      (started) => {
        const byServer = started.listenAddresses();
        for (
          const name of Object.keys(byServer).sort((a, b) =>
            Number(a.slice(6)) - Number(b.slice(6))
          )
        ) {
          for (const a of byServer[name]) console.log(`Server address: ${a}`);
        }
      },
      flags,
      "respond",
    ) ?? ExitCode.Success;
  },
});

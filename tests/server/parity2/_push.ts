/**
 * Helpers of the server push tests: the routes both Gatehouse and Caddy 2.6.2 serve, the Node
 * HTTP/2 client (push_client.mjs, run with the `node` on PATH), curl, and Caddy over TLS.
 */
import { startCaddy } from "./caddy.ts";

const CLIENT = new URL("./push_client.mjs", import.meta.url).pathname;

/** What the assets answer: the push request's fields as the server saw them. */
const SEEN = [
  "{http.request.header.Caddy-Push}",
  "{http.request.header.X-Pushed-By}",
  "{http.request.header.X-Extra}",
  "{http.request.header.User-Agent}",
  "{http.request.header.Accept}",
  "{http.request.header.Accept-Language}",
  "{http.request.header.Cookie}",
  "{http.request.method}",
  "{http.request.proto}",
].join("|");

/** The Link fields of /page: two pushed, one `nopush`, two on another origin, one icon. */
export const PAGE_LINKS = [
  "</app.js>; rel=preload; as=script, </skip.js>; rel=preload; nopush",
  "<https://cdn.example/lib.js>; rel=preload, <//cdn.example/x.js>; rel=preload",
  "</icon.png?v=2>; rel=icon",
];

/** The routes: /page pushes resources and its Link fields; every other path is an asset. */
export function pushRoutes(): unknown[] {
  return [
    {
      match: [{ path: ["/page"] }],
      handle: [
        {
          handler: "push",
          resources: [
            { target: "/style.css" },
            { method: "HEAD", target: "/{http.request.uri.query.asset}" },
          ],
          headers: {
            set: { "X-Pushed-By": ["{http.request.uri.path}"] },
            add: { "X-Extra": ["1"] },
            delete: ["User-Agent"],
            replace: { Accept: [{ search: "html", replace: "push" }] },
          },
        },
        {
          handler: "static_response",
          headers: { Link: PAGE_LINKS, "Content-Type": ["text/html"] },
          body: "<p>page</p>",
        },
      ],
      terminal: true,
    },
    {
      // two push handlers: the Link fields are pushed once
      match: [{ path: ["/twice"] }],
      handle: [
        { handler: "push" },
        { handler: "push" },
        { handler: "static_response", headers: { Link: ["</app.js>"] }, body: "twice" },
      ],
      terminal: true,
    },
    {
      // a Link set before the response exists (headers handler) is pushed too
      match: [{ path: ["/early"] }],
      handle: [
        { handler: "headers", response: { set: { Link: ["</style.css>; rel=preload"] } } },
        { handler: "push" },
        { handler: "static_response", body: "early" },
      ],
      terminal: true,
    },
    {
      handle: [{
        handler: "static_response",
        headers: { "X-Seen": [SEEN], "Content-Type": ["text/plain"] },
        body: "asset {http.request.uri}",
      }],
    },
  ];
}

/** One pushed stream as the client saw it. */
export interface Pushed {
  promised: Record<string, string>;
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  error?: string;
}

/** One response as the client saw it, with the streams pushed with it. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  pushes: Pushed[];
}

/** The requests the client sends (with the fields push requests copy). */
export interface ClientRequest {
  path: string;
  method?: string;
  headers?: Record<string, string>;
}

/** Runs the Node HTTP/2 client: one session, the requests in order. */
export async function nodeH2Client(
  origin: string,
  push: boolean,
  requests: ClientRequest[],
  caPem?: string,
): Promise<Answer[]> {
  let caFile: string | undefined;
  if (caPem) {
    caFile = await Deno.makeTempFile({ prefix: "gatehouse-push-ca-", suffix: ".pem" });
    await Deno.writeTextFile(caFile, caPem);
  }
  try {
    const out = await new Deno.Command("node", {
      args: [
        CLIENT,
        origin,
        push ? "1" : "0",
        JSON.stringify(requests),
        ...(caFile ? [caFile] : []),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    if (!out.success) {
      throw new Error(`node client failed: ${new TextDecoder().decode(out.stderr)}${text}`);
    }
    return (JSON.parse(text) as { results: Answer[] }).results;
  } finally {
    if (caFile) await Deno.remove(caFile).catch(() => {});
  }
}

/** The Node version on PATH (the tests need a real Node HTTP/2 client). */
export function nodeVersion(): string {
  try {
    const out = new Deno.Command("node", { args: ["--version"], stdout: "piped" }).outputSync();
    return new TextDecoder().decode(out.stdout).trim();
  } catch {
    return "";
  }
}

/** curl's view of one request: `<http version> <status> <body>`. */
export async function curl(url: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("curl", {
    args: ["-sS", "-w", " %{http_version} %{http_code}", ...args, url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout);
}

/** Caddy 2.6.2 serving `routes` over TLS with the given certificate, on a free port. */
export async function caddyTls(
  routes: unknown[],
  pem: { cert: string; key: string },
): Promise<{ origin: string; stop(): Promise<void> }> {
  const caddy = await startCaddy(routes, { tls_connection_policies: [{}] }, {
    tls: { certificates: { load_pem: [{ certificate: pem.cert, key: pem.key }] } },
  });
  return { origin: `https://localhost:${caddy.port}`, stop: caddy.stop };
}

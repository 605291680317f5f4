/**
 * The client of Caddy's integration tests (`caddytest.NewTester`: `CreateTestingTransport`),
 * played by curl: every connection goes to 127.0.0.1 on the URL's port whatever the host name
 * (the Go transport's `DialContext`), certificates are not verified (`InsecureSkipVerify`),
 * HTTP/2 is offered by ALPN over TLS (`ForceAttemptHTTP2`) and HTTP/1.1 is spoken in cleartext,
 * `Accept-Encoding: gzip` is asked for and decoded when the request sets none (Go's transport),
 * redirects are followed unless the request says not to (`AssertRedirect`), and a request gives
 * up after 10 s (Go's is 5 s; the machine may be busy). The request carries only what Go's would:
 * no `Accept`, no `Content-Type` unless the test sets one, and Go's `User-Agent`; the URL goes
 * out as written (no globbing of `{}`).
 */

/** One request as a Go test sends it. */
export interface Request {
  method?: string;
  url: string;
  /** Header lines as the test sets them (names as written: `Remote_user` stays so). */
  headers?: Record<string, string>;
  /** The body: text, or bytes (sent as they are). */
  body?: string | Uint8Array;
  /** Do not follow redirects (`AssertRedirect`). */
  noFollow?: boolean;
  /** `h2c`: HTTP/2 with prior knowledge over cleartext; `h1`: HTTP/1.1 only (ALPN too). */
  proto?: "h2c" | "h1";
  /** The body is streamed, of unknown length (Go's `io.Pipe` body; a PUT, as curl's `-T -`). */
  stream?: boolean;
}

/** The answer, or why there was none. */
export interface Response {
  status: number;
  /** The HTTP version curl spoke: `1.1`, `2`. */
  version: string;
  headers: Headers;
  body: string;
  /** Set when no answer came (connection refused or reset, TLS handshake failed, timeout). */
  error?: string;
}

let scratch: string | undefined;

/** Sends `r` and reads the whole answer. */
export async function send(r: Request): Promise<Response> {
  scratch ??= await Deno.makeTempDir({ prefix: "gatehouse-caddytest-client-" });
  const id = crypto.randomUUID();
  const headFile = `${scratch}/${id}.head`;
  const bodyFile = `${scratch}/${id}.body`;
  const headers = r.headers ?? {};
  const has = (name: string) => Object.keys(headers).some((k) => k.toLowerCase() === name);
  const args = [
    "-sS",
    "-g",
    "-k",
    "--connect-to",
    "::127.0.0.1:",
    "-m",
    "10",
    "-o",
    bodyFile,
    "-D",
    headFile,
    "-w",
    "%{http_code} %{http_version}",
    "-A",
    r.proto === "h2c" ? "Go-http-client/2.0" : "Go-http-client/1.1",
    "-H",
    "Accept:",
  ];
  if (!has("accept-encoding")) args.push("-H", "Accept-Encoding: gzip", "--compressed");
  if (!r.noFollow) args.push("-L", "--max-redirs", "10");
  if (r.proto === "h2c") args.push("--http2-prior-knowledge");
  if (r.proto === "h1") args.push("--http1.1");
  const method = r.method ?? (r.stream ? "PUT" : r.body === undefined ? "GET" : "POST");
  const implied = r.stream ? "PUT" : r.body === undefined ? "GET" : "POST";
  if (r.body !== undefined) {
    args.push(r.stream ? "-T" : "--data-binary", r.stream ? "-" : "@-");
    if (!has("content-type")) args.push("-H", "Content-Type:");
  }
  if (method !== implied) args.push("-X", method);
  // header lines go through a file: an argument is limited to 128 KiB, a header line is not
  const headerFile = `${scratch}/${id}.headers`;
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\n`).join("");
  if (lines) {
    await Deno.writeTextFile(headerFile, lines);
    args.push("-H", `@${headerFile}`);
  }
  args.push(r.url);
  const child = new Deno.Command("curl", {
    args,
    stdin: r.body === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (r.body !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(typeof r.body === "string" ? new TextEncoder().encode(r.body) : r.body);
    await w.close();
  }
  const out = await child.output();
  const [code, version] = new TextDecoder().decode(out.stdout).split(" ");
  const heads = await Deno.readTextFile(headFile).catch(() => "");
  const body = await Deno.readTextFile(bodyFile).catch(() => "");
  await Deno.remove(headFile).catch(() => {});
  await Deno.remove(bodyFile).catch(() => {});
  await Deno.remove(headerFile).catch(() => {});
  const res: Response = {
    status: Number(code) || 0,
    version: version ?? "",
    headers: lastHeaderBlock(heads),
    body,
  };
  if (!out.success || res.status === 0) {
    res.error = new TextDecoder().decode(out.stderr).trim() || `curl exited ${out.code}`;
  }
  return res;
}

/** The headers of the last response in curl's `-D` file (after redirects and 1xx answers). */
function lastHeaderBlock(text: string): Headers {
  const blocks = text.split(/\r\n\r\n/).filter((b) => b.trim() !== "");
  const h = new Headers();
  const last = blocks.at(-1);
  if (!last) return h;
  for (const line of last.split("\r\n").slice(1)) {
    const i = line.indexOf(":");
    if (i > 0) h.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  return h;
}

/** Removes the client's scratch directory. */
export async function closeClient(): Promise<void> {
  if (scratch) await Deno.remove(scratch, { recursive: true }).catch(() => {});
  scratch = undefined;
}

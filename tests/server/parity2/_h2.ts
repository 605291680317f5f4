/**
 * Helpers of the HTTP/2 transport tests: the Node HTTP/2 upstream (h2_upstream.mjs) as a
 * process whose events the test reads, and a raw HTTP/1.1 client that sends a request with
 * its body at once and reads past interim (1xx) responses.
 */

const FIXTURE = new URL("./h2_upstream.mjs", import.meta.url).pathname;

/** One event of the upstream: `session`, `session-close`, `stream`, `data`, `100`, ... */
export interface UpstreamEvent {
  ev: string;
  id?: number;
  path?: string;
  session?: number;
  peer?: number;
  received?: number;
  expect?: string | null;
}

/** A running Node HTTP/2 upstream. */
export interface NodeH2 {
  port: number;
  dial: string;
  events: UpstreamEvent[];
  /** Events of one kind. */
  of(ev: string): UpstreamEvent[];
  /** Waits (watchdog: 10 s) until `pred` holds for the events. */
  until(pred: (events: UpstreamEvent[]) => boolean, what: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the Node HTTP/2 upstream: h2c, or h2 over TLS with `tls` (PEM files written here). */
export async function nodeH2(
  o: { tls?: { cert: string; key: string }; maxStreams?: number } = {},
): Promise<NodeH2> {
  const args = [FIXTURE];
  let dir: string | undefined;
  if (o.tls) {
    dir = await Deno.makeTempDir({ prefix: "gatehouse-h2-" });
    await Deno.writeTextFile(`${dir}/cert.pem`, o.tls.cert);
    await Deno.writeTextFile(`${dir}/key.pem`, o.tls.key);
    args.push("--tls", `${dir}/cert.pem`, `${dir}/key.pem`);
  }
  if (o.maxStreams) args.push("--max-streams", String(o.maxStreams));
  const child = new Deno.Command("node", {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const events: UpstreamEvent[] = [];
  let portSeen!: (p: number) => void;
  const port = new Promise<number>((r) => (portSeen = r));
  const reading = (async () => {
    let rest = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      rest += chunk;
      let nl;
      while ((nl = rest.indexOf("\n")) >= 0) {
        const line = JSON.parse(rest.slice(0, nl));
        rest = rest.slice(nl + 1);
        if (line.ev === "port") portSeen(line.port);
        else events.push(line);
      }
    }
  })();
  const p = await port;
  const until = async (pred: (e: UpstreamEvent[]) => boolean, what: string) => {
    const end = Date.now() + 10_000;
    while (!pred(events)) {
      if (Date.now() > end) {
        throw new Error(`upstream: no ${what} (events: ${JSON.stringify(events)})`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    port: p,
    dial: `127.0.0.1:${p}`,
    events,
    of: (ev) => events.filter((e) => e.ev === ev),
    until,
    async stop() {
      await child.stdin.close();
      await child.status;
      await reading;
      if (dir) await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A final response read by `exchange`. */
export interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

/**
 * Sends one HTTP/1.1 request with its whole body at once (even with `Expect: 100-continue`)
 * and reads until the connection closes; interim responses are skipped.
 */
export async function exchange(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = "",
): Promise<Answer> {
  const u = new URL(url);
  const c = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
  try {
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${
      headers.host ?? u.host
    }\r\nconnection: close\r\n`;
    for (const [k, v] of Object.entries(headers)) if (k !== "host") head += `${k}: ${v}\r\n`;
    if (body) head += `content-length: ${new TextEncoder().encode(body).length}\r\n`;
    await c.write(new TextEncoder().encode(head + "\r\n" + body));
    let all = new Uint8Array(0);
    const buf = new Uint8Array(64 * 1024);
    for (;;) {
      const n = await c.read(buf);
      if (n === null) break;
      const merged = new Uint8Array(all.length + n);
      merged.set(all);
      merged.set(buf.subarray(0, n), all.length);
      all = merged;
    }
    let text = new TextDecoder().decode(all);
    while (/^HTTP\/1\.1 1\d\d /.test(text)) text = text.slice(text.indexOf("\r\n\r\n") + 4);
    const end = text.indexOf("\r\n\r\n");
    const lines = text.slice(0, end).split("\r\n");
    const h = new Headers();
    for (const l of lines.slice(1)) {
      h.append(l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim());
    }
    let rest = text.slice(end + 4);
    if (h.get("transfer-encoding")?.includes("chunked")) {
      let out = "";
      while (rest.length) {
        const nl = rest.indexOf("\r\n");
        const size = parseInt(rest.slice(0, nl), 16);
        if (!size) break;
        out += rest.slice(nl + 2, nl + 2 + size);
        rest = rest.slice(nl + 2 + size + 2);
      }
      rest = out;
    }
    return { status: Number(lines[0].split(" ")[1]), headers: h, body: rest };
  } finally {
    try {
      c.close();
    } catch { /* closed */ }
  }
}

/**
 * The interactive Node HTTP/2 client (h2_client.mjs, run with the `node` on PATH) as an object:
 * one session per client, requests answered by id, session events (GOAWAY, close) recorded.
 */

const FIXTURE = new URL("./h2_client.mjs", import.meta.url).pathname;

/** A response, or the error its stream ended with. */
export interface H2Result {
  id: number;
  status?: number;
  headers?: Record<string, string | string[]>;
  length?: number;
  sha256?: string;
  body?: string;
  error?: string;
  code?: string;
  rstCode?: number;
}

/** How the client connects. */
export interface H2Connect {
  origin: string;
  ca?: string;
  cert?: string;
  key?: string;
  servername?: string;
  push?: boolean;
  /** Bytes sent before TLS or HTTP/2 (a PROXY protocol header). */
  proxy?: string;
  /** The server's certificate is not verified. */
  insecure?: boolean;
}

/** A request: `body` repeated `repeat` times, in `slow[0]` pieces every `slow[1]` ms. */
export interface H2Request {
  path: string;
  method?: string;
  authority?: string;
  headers?: Record<string, string>;
  body?: string;
  repeat?: number;
  slow?: [number, number];
  /** The body is sent once the response headers came (a full-duplex exchange). */
  afterResponse?: boolean;
}

/** A running client session. */
export interface H2Client {
  /** Every line the client wrote (results and events), in order. */
  readonly lines: Record<string, unknown>[];
  request(r: H2Request): Promise<H2Result>;
  /** Waits (watchdog: 15 s) until an event line satisfies `pred`. */
  event(pred: (e: Record<string, unknown>) => boolean, what: string): Promise<void>;
  /** Closes the session (gracefully) and waits for the process. */
  close(): Promise<void>;
}

/** True when a `node` runs here. */
export function nodeAvailable(): boolean {
  try {
    return new Deno.Command("node", { args: ["--version"], stdout: "null" }).outputSync().success;
  } catch {
    return false;
  }
}

/** Starts a client session. */
export function h2Client(c: H2Connect): H2Client {
  const child = new Deno.Command("node", {
    args: [FIXTURE],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const enc = new TextEncoder();
  const send = (o: unknown) => writer.write(enc.encode(JSON.stringify(o) + "\n"));
  const lines: Record<string, unknown>[] = [];
  const waiting = new Map<number, (r: H2Result) => void>();
  let changed: () => void = () => {};
  const reading = (async () => {
    let rest = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      rest += chunk;
      let nl;
      while ((nl = rest.indexOf("\n")) >= 0) {
        const line = JSON.parse(rest.slice(0, nl)) as Record<string, unknown>;
        rest = rest.slice(nl + 1);
        lines.push(line);
        if (typeof line.id === "number") waiting.get(line.id)?.(line as unknown as H2Result);
        changed();
      }
    }
  })();
  send({ op: "connect", ...c });
  let next = 1;
  return {
    lines,
    request(r) {
      const id = next++;
      const done = new Promise<H2Result>((resolve) => waiting.set(id, resolve));
      send({ op: "request", id, ...r });
      return done;
    },
    async event(pred, what) {
      const end = Date.now() + 15_000;
      while (!lines.some((l) => l.ev !== undefined && pred(l))) {
        if (Date.now() > end) throw new Error(`no ${what} event (got ${JSON.stringify(lines)})`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, 200);
          changed = () => {
            clearTimeout(t);
            r();
          };
        });
      }
    },
    async close() {
      await send({ op: "close" }).catch(() => {});
      await writer.close().catch(() => {});
      const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await child.status;
      clearTimeout(t);
      await reading.catch(() => {});
    },
  };
}

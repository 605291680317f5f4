/**
 * The server as a process for the field tests: `gatehouse run` on a JSON config whose listen
 * addresses get free loopback ports, ready once its first listener accepts; and a raw TCP
 * client that reports what arrived and whether the server closed the connection.
 */
import { CLI, DENO_JSON, freePort } from "../fixtures/helpers.ts";

export interface Proc {
  /** The ports given to `servers[name].listen`, in order. */
  ports(name?: string): number[];
  /** Everything the process wrote. */
  output(): string;
  stop(): Promise<void>;
}

type Servers = Record<string, { listen?: string[] } & Record<string, unknown>>;

/**
 * Starts `gatehouse run` with `apps.http` (listen entries ending in `:0` get free ports) and
 * `extraApps`; waits until the config is serving.
 */
export async function runServer(
  http: { servers: Servers } & Record<string, unknown>,
  extraApps: Record<string, unknown> = {},
): Promise<Proc> {
  const cfg = structuredClone(http);
  const ports = new Map<string, number[]>();
  for (const [name, s] of Object.entries(cfg.servers)) {
    const list: number[] = [];
    s.listen = (s.listen ?? []).map((a) => {
      if (!a.endsWith(":0")) return a;
      const p = freePort();
      list.push(p);
      return a.slice(0, -1) + p;
    });
    ports.set(name, list);
    s.automatic_https ??= { disable: true };
  }
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-fields-" });
  const file = `${dir}/config.json`;
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      admin: { disabled: true },
      logging: { logs: { default: { writer: { output: "stderr" }, level: "INFO" } } },
      apps: { http: cfg, ...extraApps },
    }),
  );
  const child = new Deno.Command(Deno.execPath(), {
    // one process: these tests are about the fields (workers/ tests the worker processes)
    args: ["run", "-A", "--config", DENO_JSON, CLI, "run", "-c", file, "--workers", "1"],
    env: { HOME: dir, XDG_DATA_HOME: `${dir}/data`, XDG_CONFIG_HOME: `${dir}/config` },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const dec = new TextDecoder();
  const drain = async (s: ReadableStream<Uint8Array>) => {
    for await (const c of s) out += dec.decode(c);
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const end = Date.now() + 30_000;
  let exited = false;
  child.status.then(() => (exited = true));
  // ready once the config started (its listeners are bound before, and answer 503 till then)
  while (!out.includes("serving initial configuration")) {
    if (exited || Date.now() > end) {
      if (!exited) child.kill("SIGKILL");
      await drained;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      throw new Error(`server did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const firstName = Object.keys(cfg.servers)[0];
  return {
    ports: (name = firstName) => ports.get(name)!,
    output: () => out,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const hung = await Promise.race([
        child.status.then(() => false),
        new Promise<boolean>((r) => timer = setTimeout(() => r(true), 15_000)),
      ]);
      clearTimeout(timer);
      if (hung) {
        child.kill("SIGKILL");
        await child.status;
        await drained;
        throw new Error(`the server did not stop on SIGTERM:\n${out}`);
      }
      await drained;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** What a raw connection received. */
export interface Received {
  text: string;
  /** The server closed (or reset) the connection. */
  closed: boolean;
}

const enc = new TextEncoder();

/** A raw TCP connection to a loopback port. */
export class RawConn {
  #buf = "";
  #closed = false;
  #reading: Promise<void>;
  #wake: (() => void) | null = null;

  private constructor(readonly conn: Deno.Conn) {
    this.#reading = this.#pump();
  }

  static async open(port: number): Promise<RawConn> {
    return new RawConn(await Deno.connect({ hostname: "127.0.0.1", port }));
  }

  async #pump(): Promise<void> {
    const buf = new Uint8Array(65536);
    const dec = new TextDecoder("latin1");
    try {
      while (true) {
        const n = await this.conn.read(buf);
        if (n === null) break;
        this.#buf += dec.decode(buf.subarray(0, n));
        this.#wake?.();
      }
    } catch { /* reset */ }
    this.#closed = true;
    this.#wake?.();
  }

  async send(data: string | Uint8Array): Promise<void> {
    await this.conn.write(typeof data === "string" ? enc.encode(data) : data);
  }

  /** Waits until `pred` holds on what arrived, or the connection closed, or `ms` passed. */
  async until(pred: (r: Received) => boolean, ms = 8000): Promise<Received> {
    const end = Date.now() + ms;
    while (true) {
      const r = { text: this.#buf, closed: this.#closed };
      if (pred(r) || r.closed || Date.now() > end) return r;
      await new Promise<void>((res) => {
        this.#wake = res;
        setTimeout(res, Math.max(1, Math.min(100, end - Date.now())));
      });
      this.#wake = null;
    }
  }

  /** Takes what arrived so far (the next `until` sees only newer bytes). */
  take(): string {
    const t = this.#buf;
    this.#buf = "";
    return t;
  }

  async close(): Promise<void> {
    try {
      this.conn.close();
    } catch { /* closed */ }
    await this.#reading;
  }
}

/** True once a whole response with a Content-Length body (or none) arrived. */
export function oneResponse(r: Received): boolean {
  const end = r.text.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const m = /\r\ncontent-length: *(\d+)/i.exec(r.text.slice(0, end));
  return r.text.length - end - 4 >= (m ? Number(m[1]) : 0);
}

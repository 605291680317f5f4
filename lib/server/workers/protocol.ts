/**
 * The pipe between the primary process and a worker process: typed messages, one per line
 * (`\x1e` + JSON + `\n`) on the worker's standard input (primary → worker) and standard output
 * (worker → primary). The record separator starts every message, so output that is no message
 * (something in the worker printing to stdout) is told apart and never breaks the stream.
 *
 * | primary → worker | reply | what the worker does |
 * | --- | --- | --- |
 * | `prepare` g, worker, config, ports | routes, ports | provisions config g (binds its new addresses, serves nothing new); the old keeps serving |
 * | `commit` g | addresses | starts g: its handlers take the addresses over; the old config stays alive |
 * | `rollback` g | | stops g again: the previous config's handlers serve again |
 * | `stop` g / `cleanup` g | | stops / releases config g (the one replaced, or an aborted one) |
 * | `warm` config | | a spare validates the running config (binding nothing), so that its modules are loaded when it takes a place |
 * | `admin` request | response | answers an admin route of the running config's modules |
 * | `shutdown` grace | exit code | stops, waits for requests in flight (at most grace ms), exits |
 *
 * Worker → primary without a request: `hello` (ready), `log` (a log entry of config g); and
 * `ask` (the `metrics` handler's summed text), which the primary answers with `answer`.
 *
 * @module
 */
import type { JsonObject } from "../config_tree.ts";
import type { LogEntry } from "../logging/entry.ts";
import { fieldValue } from "../logging/entry.ts";

/** Bumped when a message changes shape: a worker of another version is refused. */
export const PROTOCOL_VERSION = 1;

/** An admin request as it crosses the pipe. */
export interface WireRequest {
  method: string;
  /** Path and query. */
  target: string;
  headers: [string, string][];
  /** The body, base64 (absent when empty). */
  body?: string;
}

/** An admin response as it crosses the pipe. */
export interface WireResponse {
  status: number;
  headers: [string, string][];
  /** The body, base64 (absent when empty). */
  body?: string;
}

/** What each request asks and what its reply carries. */
export interface Calls {
  prepare: {
    /** `worker`: the number the worker serves as (a spare learns it here). */
    ask: { g: number; worker: number; config: JsonObject | null; ports: Record<string, number> };
    /** The admin route patterns of the config's modules; the ports of its `:0` addresses. */
    answer: { routes: string[]; ports: Record<string, number> };
  };
  commit: { ask: { g: number }; answer: { addresses: Record<string, string[]> } };
  warm: { ask: { config: JsonObject | null }; answer: Record<string, never> };
  rollback: { ask: { g: number }; answer: Record<string, never> };
  stop: { ask: { g: number }; answer: Record<string, never> };
  cleanup: { ask: { g: number }; answer: Record<string, never> };
  admin: { ask: { request: WireRequest }; answer: WireResponse };
  shutdown: { ask: { graceMs?: number }; answer: { code: number } };
}

/** The name of a request. */
export type Call = keyof Calls;

/** A request from the primary. */
export type Ask = { [K in Call]: { t: K; id: number } & Calls[K]["ask"] }[Call];

/** What a worker asks the primary: the `/metrics` text summed over every worker. */
export type WorkerAsks = "metrics";

/** The primary's answer to a worker's question. */
export type PrimaryAnswer =
  | { t: "answer"; id: number; ok: true; value: string }
  | { t: "answer"; id: number; ok: false; error: string };

/** What a worker sends. */
export type FromWorker =
  | { t: "hello"; pid: number; version: number }
  | { t: "ask"; id: number; what: WorkerAsks }
  | { t: "reply"; id: number; ok: true; value: unknown }
  | { t: "reply"; id: number; ok: false; error: string }
  | { t: "log"; g?: number; entry: LogEntry };

const RS = "\x1e";
const encoder = new TextEncoder();

/** Field values as plain JSON (errors become their message, headers an object). */
function replacer(_key: string, value: unknown): unknown {
  return fieldValue(value);
}

/** Bytes buffered for the pipe before log entries are dropped (replies never are). */
export const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;

/**
 * One end of the pipe: writes messages (batched: whatever was sent while a write was under way
 * goes out in the next one) and reads the other end's, line by line.
 *
 * @example
 * ```ts ignore
 * const end = new PipeEnd(Deno.stdin.readable, Deno.stdout.writable);
 * end.read((m) => console.error(m), (text) => console.error("stray:", text));
 * end.send({ t: "hello", pid: Deno.pid, version: PROTOCOL_VERSION });
 * ```
 */
export class PipeEnd<In, Out> {
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #queue: string[] = [];
  #queued = 0;
  #writing?: Promise<void>;
  #broken = false;
  /** Log entries dropped because the other end did not keep up. */
  dropped = 0;

  constructor(readonly readable: ReadableStream<Uint8Array>, writable: WritableStream<Uint8Array>) {
    this.#writer = writable.getWriter();
  }

  /**
   * Sends one message. `droppable` messages (log entries) are dropped while more than
   * {@linkcode MAX_BUFFERED_BYTES} wait for the pipe.
   */
  send(message: Out, droppable = false): void {
    if (this.#broken) return;
    if (droppable && this.#queued > MAX_BUFFERED_BYTES) {
      this.dropped++;
      return;
    }
    const line = RS + JSON.stringify(message, replacer) + "\n";
    this.#queue.push(line);
    this.#queued += line.length;
    this.#writing ??= this.#drain();
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length) {
        const text = this.#queue.join("");
        this.#queue = [];
        this.#queued = 0;
        await this.#writer.write(encoder.encode(text));
      }
    } catch {
      this.#broken = true; // the other end is gone
      this.#queue = [];
    } finally {
      this.#writing = undefined;
    }
  }

  /** Resolves once everything sent so far is written. */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  /**
   * Reads messages until the other end closes. `onStray` gets text that is no message; a line
   * whose JSON does not parse is stray too.
   */
  async read(onMessage: (m: In) => void, onStray: (text: string) => void): Promise<void> {
    let rest = "";
    const take = (line: string) => {
      const at = line.lastIndexOf(RS);
      if (at < 0) {
        if (line.trim()) onStray(line);
        return;
      }
      if (line.slice(0, at).trim()) onStray(line.slice(0, at));
      let m: In;
      try {
        m = JSON.parse(line.slice(at + 1));
      } catch {
        onStray(line.slice(at + 1));
        return;
      }
      onMessage(m);
    };
    try {
      const decoder = new TextDecoder();
      for await (const bytes of this.readable) {
        rest += decoder.decode(bytes, { stream: true });
        let nl: number;
        while ((nl = rest.indexOf("\n")) >= 0) {
          take(rest.slice(0, nl));
          rest = rest.slice(nl + 1);
        }
      }
    } catch { /* the other end is gone */ }
    if (rest) take(rest);
  }

  /** Closes the writing side (the other end reads the end of the stream). */
  async close(): Promise<void> {
    await this.flush();
    await this.#writer.close().catch(() => {});
  }
}

/** Base64 of bytes (the admin bodies crossing the pipe). */
export function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

/** Bytes of base64. */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const s = atob(text);
  const out = new Uint8Array(new ArrayBuffer(s.length));
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** A request as it crosses the pipe. */
export async function wireRequest(req: Request): Promise<WireRequest> {
  const url = new URL(req.url);
  const body = req.body ? new Uint8Array(await req.arrayBuffer()) : undefined;
  return {
    method: req.method,
    target: url.pathname + url.search,
    headers: [...req.headers],
    ...(body?.length ? { body: toBase64(body) } : {}),
  };
}

/** The response a wire response describes. */
export function fromWireResponse(w: WireResponse): Response {
  const body = w.body ? fromBase64(w.body) : null;
  return new Response(w.status === 204 || w.status === 304 ? null : body, {
    status: w.status,
    headers: w.headers,
  });
}

/** A response as it crosses the pipe. */
export async function wireResponse(res: Response): Promise<WireResponse> {
  const body = new Uint8Array(await res.arrayBuffer());
  return {
    status: res.status,
    headers: [...res.headers],
    ...(body.length ? { body: toBase64(body) } : {}),
  };
}

/** The request a wire request describes. */
export function fromWireRequest(w: WireRequest): Request {
  return new Request(`http://worker${w.target}`, {
    method: w.method,
    headers: w.headers,
    body: w.body && w.method !== "GET" && w.method !== "HEAD" ? fromBase64(w.body) : undefined,
  });
}

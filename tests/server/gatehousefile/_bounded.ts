/**
 * A per-input bound for fuzzing: each input is adapted and formatted in a worker, and an
 * input that gets no answer within the deadline fails at once with the input in the message
 * (the worker is stopped and a fresh one started). A bound on the whole run would only stall
 * on a hang — the parser and formatter are synchronous, so a hang never yields to a timer in
 * the same thread.
 */

/** What the worker can do with an input. */
export type FuzzOp = "adapt" | "fmt" | "spin";

/** An error thrown in the worker, as it crossed the thread boundary. */
export interface Thrown {
  /** `Error.name`. */
  name: string;
  /** True when it was a plain `Error` (not a TypeError, RangeError, ...). */
  plain: boolean;
  /** The message. */
  message: string;
  /** The stack. */
  stack: string;
}

/** What the worker reports for one input. */
export interface FuzzReport {
  /** The input's number. */
  id: number;
  /** Adapting: returned, or threw. */
  adapt?: { ok: true } | { ok: false; error: Thrown };
  /** Formatting: the text, or what it threw. */
  fmt?: { ok: true; out: string } | { ok: false; error: Thrown };
}

/** Deadline for one input; far above what any input here takes, so only a hang meets it. */
export const INPUT_DEADLINE_MS = 10_000;
/** Deadline for a worker to load the adapter. */
const START_DEADLINE_MS = 120_000;

/** Runs inputs in a worker, each under its own deadline. Close it when done. */
export class BoundedRunner {
  private worker?: Worker;
  private ready?: Promise<void>;
  private nextId = 0;
  private pending = new Map<number, (r: FuzzReport | Error) => void>();

  /** A runner whose inputs each get `deadlineMs`. */
  constructor(readonly deadlineMs: number = INPUT_DEADLINE_MS) {}

  private start(): Promise<void> {
    const w = new Worker(new URL("./_fuzz_worker.ts", import.meta.url).href, { type: "module" });
    this.worker = w;
    let started!: () => void;
    let failed!: (e: Error) => void;
    const ready = new Promise<void>((res, rej) => [started, failed] = [res, rej]);
    const timer = setTimeout(
      () => failed(new Error(`the fuzz worker did not start within ${START_DEADLINE_MS} ms`)),
      START_DEADLINE_MS,
    );
    w.onmessage = (e: MessageEvent<FuzzReport | { ready: true }>) => {
      if ("ready" in e.data) {
        clearTimeout(timer);
        started();
        return;
      }
      const done = this.pending.get(e.data.id);
      this.pending.delete(e.data.id);
      done?.(e.data);
    };
    w.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      clearTimeout(timer);
      const err = new Error(`the fuzz worker crashed: ${e.message}`);
      failed(err);
      for (const done of this.pending.values()) done(err);
      this.pending.clear();
      this.stop();
    };
    return ready;
  }

  private stop(): void {
    this.worker?.terminate();
    this.worker = undefined;
    this.ready = undefined;
  }

  /**
   * Runs `ops` on `src` in the worker. Rejects when there is no answer within the deadline
   * (naming the input), or when the worker crashed.
   */
  async run(src: string, ops: FuzzOp[]): Promise<FuzzReport> {
    this.ready ??= this.start();
    await this.ready;
    const id = this.nextId++;
    const answer = await new Promise<FuzzReport | Error>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.stop(); // the worker is stuck in this input; the next input gets a fresh one
        resolve(
          new Error(
            `no result within ${this.deadlineMs} ms (a hang) for the input ${JSON.stringify(src)}`,
          ),
        );
      }, this.deadlineMs);
      this.pending.set(id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      this.worker!.postMessage({ id, src, ops });
    });
    if (answer instanceof Error) throw answer;
    return answer;
  }

  /** Stops the worker. */
  close(): void {
    for (const done of this.pending.values()) done(new Error("closed"));
    this.pending.clear();
    this.stop();
  }
}

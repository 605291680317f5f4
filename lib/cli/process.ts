/**
 * Process life of `run`: signals and exit codes.
 *
 * | Signal | Behaviour |
 * |---|---|
 * | SIGINT | graceful exit (0, or 3 when cleanup fails); a second SIGINT exits at once with 2 |
 * | SIGQUIT | immediate exit with 2, storage locks still cleaned up |
 * | SIGTERM | graceful exit |
 * | SIGUSR1 | ignored: discarded by the kernel, so Deno's runtime cannot open its inspector |
 * | SIGUSR2, SIGHUP | ignored (logged) |
 *
 * @module
 */
import { type Engine, runnerOf } from "../server/engine.ts";
import { cleanUpOwnLocks } from "../server/module/storage.ts";
import { durationMs } from "../server/config/duration.ts";
import { ExitCode } from "./command.ts";
import { guardInspectorSignal } from "../inspector_signal.ts";

/** Controls the exit of a running server process. */
export class ProcessLife {
  #resolve!: (code: number) => void;
  /** Resolves with the exit code when the process should exit. */
  readonly exited: Promise<number> = new Promise((r) => (this.#resolve = r));
  #exiting = false;
  #listeners: [Deno.Signal, () => void][] = [];

  constructor(readonly engine: Engine, readonly pidfile?: string) {}

  /** The grace period of the running config (`apps.http.grace_period`), in ms. */
  gracePeriod(): number | undefined {
    const raw = (this.engine.config as { apps?: { http?: { grace_period?: unknown } } } | null)
      ?.apps?.http
      ?.grace_period;
    try {
      return raw === undefined ? undefined : durationMs(raw);
    } catch {
      return undefined;
    }
  }

  /** Graceful exit: stop accepting, drain (up to the grace period), clean up, exit 0 or 3. */
  exitGracefully(reason: string): void {
    if (this.#exiting) return;
    this.#exiting = true;
    this.engine.log.warn("exiting", { reason });
    this.engine.shutdown(this.gracePeriod()).then(
      (code) => this.#finish(code),
      () => this.#finish(ExitCode.CleanupFailed),
    );
  }

  /**
   * Immediate exit with code 2, after releasing this process's storage locks (file locks at
   * once; a database storage gets at most 2 s to answer).
   */
  exitNow(reason: string): void {
    this.engine.log.error("exiting immediately", { reason, exit_code: ExitCode.Forced });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<void>((r) => (timer = setTimeout(r, 2000)));
    const workers = runnerOf(this.engine).exitNow?.() ?? Promise.resolve();
    Promise.race([Promise.all([cleanUpOwnLocks(), workers]), bound]).finally(() => {
      clearTimeout(timer);
      this.#removePidfile();
      Deno.exit(ExitCode.Forced);
    });
  }

  #removePidfile(): boolean {
    if (!this.pidfile) return true;
    try {
      Deno.removeSync(this.pidfile);
      return true;
    } catch {
      return false;
    }
  }

  async #finish(code: number): Promise<void> {
    await cleanUpOwnLocks();
    if (!this.#removePidfile()) code = ExitCode.CleanupFailed;
    this.removeSignals();
    this.#resolve(code);
  }

  /** Installs the signal handlers of the table above. */
  installSignals(): void {
    const on = (sig: Deno.Signal, fn: () => void) => {
      try {
        Deno.addSignalListener(sig, fn);
        this.#listeners.push([sig, fn]);
      } catch { /* signal not supported on this platform */ }
    };
    on("SIGINT", () => {
      if (this.#exiting) this.exitNow("SIGINT received twice");
      else this.exitGracefully("SIGINT");
    });
    on("SIGTERM", () => this.exitGracefully("SIGTERM"));
    on("SIGQUIT", () => this.exitNow("SIGQUIT"));
    for (const sig of ["SIGUSR2", "SIGHUP"] as const) {
      on(
        sig,
        () => this.engine.log.info("signal ignored; use reload or the admin API", { signal: sig }),
      );
    }
    this.#guardInspectorSignal();
  }

  /** Makes SIGUSR1 ignored by the kernel, now and once Deno armed its inspector trigger. */
  #guardInspectorSignal(): void {
    this.#cancelGuard = guardInspectorSignal((guard) =>
      this.engine.log.warn(
        "SIGUSR1 cannot be ignored: Deno opens its V8 inspector on 127.0.0.1:9229 when it " +
          "receives SIGUSR1; run the server with -A or --allow-ffi",
        { reason: guard },
      )
    );
  }

  #cancelGuard?: () => void;

  /** Removes the signal handlers (SIGUSR1 stays ignored). */
  removeSignals(): void {
    this.#cancelGuard?.();
    for (const [sig, fn] of this.#listeners.splice(0)) {
      try {
        Deno.removeSignalListener(sig, fn);
      } catch { /* already gone */ }
    }
  }
}

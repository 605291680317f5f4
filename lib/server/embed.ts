/**
 * Embedding: run the whole server inside a Deno program.
 *
 * @module
 */
import "./standard.ts";
import { Engine } from "./engine.ts";
import type { Json } from "./config_tree.ts";

/** Options of {@linkcode startServer}. */
export interface StartServerOptions {
  /** The initial config (native JSON value). Default: empty config. */
  config?: unknown;
  /**
   * Admin address used when the config has no `admin.listen` (e.g. `127.0.0.1:0`).
   * Default `false`: no admin endpoint unless the config asks for one.
   */
  adminAddress?: string | false;
  /** Autosave file written after every change. Default: none. */
  autosavePath?: string | false;
  /** Largest admin request body in bytes (default 100 MiB). */
  maxBodyBytes?: number;
  /** Longest wait for in-flight requests when listeners close (ms). Default: no limit. */
  gracePeriodMs?: number;
}

/** A running embedded server. */
export interface EmbeddedServer {
  /** The bound admin address (`127.0.0.1:54321`), or undefined when there is none. */
  readonly adminAddress: string | undefined;
  /** `http://<adminAddress>` for TCP admin endpoints. */
  readonly adminUrl: string | undefined;
  /** Loads a new config (transactional); false when identical and not forced. */
  load(config: unknown, options?: { force?: boolean }): Promise<boolean>;
  /** The running config (a copy). */
  config(): Json;
  /** Provisions a config without running it; throws when invalid. */
  validate(config: unknown): Promise<void>;
  /** Stops everything; resolves to the exit code (0, or 3 on cleanup failure). */
  stop(): Promise<number>;
  /** Resolves with the exit code once stopped (by `stop()` or `POST /stop`). */
  readonly finished: Promise<number>;
  /** The engine (advanced use). */
  readonly engine: Engine;
}

/**
 * Starts a server with a config and, optionally, an admin endpoint.
 *
 * Signals stay the embedding program's: unlike `gatehouse run`, this does not make the process
 * ignore SIGUSR1, on which Deno opens its V8 inspector (127.0.0.1:9229, anyone who can connect
 * runs code as the process). A long-running program that must not give a debugger to whoever
 * can signal it calls `guardInspectorSignal()` (exported beside this function) first; it
 * needs the `ffi` permission.
 *
 * @example
 * ```ts
 * import { startServer } from "./embed.ts";
 * const server = await startServer({
 *   adminAddress: "127.0.0.1:0",
 *   config: { apps: { http: { servers: { s: { listen: ["127.0.0.1:8080"], routes: [] } } } } },
 * });
 * console.log(server.adminUrl);
 * await server.stop();
 * ```
 */
export async function startServer(options: StartServerOptions = {}): Promise<EmbeddedServer> {
  let resolveFinished!: (code: number) => void;
  const finished = new Promise<number>((r) => (resolveFinished = r));
  let stopping: Promise<number> | undefined;
  const stop = () => {
    stopping ??= engine.shutdown().then((code) => {
      resolveFinished(code);
      return code;
    });
    return stopping;
  };
  const engine: Engine = new Engine({
    defaultAdmin: options.adminAddress ?? false,
    autosavePath: options.autosavePath ?? false,
    maxBodyBytes: options.maxBodyBytes,
    gracePeriodMs: options.gracePeriodMs,
    onStopRequest: () => void stop(),
  });
  try {
    await engine.load(options.config ?? null, true);
  } catch (e) {
    await engine.shutdown();
    throw e;
  }
  return {
    get adminAddress() {
      return engine.adminAddress;
    },
    get adminUrl() {
      const a = engine.adminAddress;
      return a && !a.startsWith("unix/") ? `http://${a}` : undefined;
    },
    load: (config, o) => engine.load(config, o?.force ?? false),
    config: () => engine.config,
    validate: (config) => engine.validate(config),
    stop,
    finished,
    engine,
  };
}

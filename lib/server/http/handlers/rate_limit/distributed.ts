/**
 * Distributed rate limiting, as caddy-ratelimit's `distributed.go`: every `write_interval`
 * an instance stores the counts of all its zones under `rate_limit/instances/<id>.rlstate`
 * in the storage the instances share, and every `read_interval` it reads the other
 * instances' files. A decision adds the last known counts of the others (those that reported
 * within the zone's window) to its own: approximate, and eventually consistent — a burst
 * spread over several instances within one interval can pass the limit by what the others
 * had not yet written.
 *
 * The state is JSON (`{"timestamp": ms, "zones": {"<zone>": {"<key>": [count, oldest_ms]}}}`),
 * not the plugin's gob encoding: instances of Gatehouse share counts with each other, not
 * with Caddy. The instance id is kept in `instance.uuid` of the data directory (as Caddy's),
 * so a restarted instance goes on writing the same file. Worker processes share the data
 * directory, so each is an instance of its own, `<uuid>-worker-<n>` (`GATEHOUSE_WORKER`):
 * a worker that replaces worker `n` goes on writing its file.
 *
 * @module
 */
import type { Logger } from "../../../module/instance.ts";
import { isNotFound, type Storage } from "../../../module/storage.ts";
import { dataDir } from "../../../storage/dirs.ts";
import { allZones } from "./zones.ts";
import { WORKER_ENV } from "../../../module/worker_id.ts";

/** Where the instances' state files are. */
export const STATE_PREFIX = "rate_limit/instances";

/** One instance's counts as stored. */
export interface InstanceState {
  /** When they were taken (ms since the epoch). */
  timestamp: number;
  /** Zone → key → `[count, oldest event (ms)]` within the zone's window at `timestamp`. */
  zones: Record<string, Record<string, [number, number]>>;
}

let instanceId: Promise<string> | null = null;

/**
 * This instance's id: the one in `<data dir>/instance.uuid`, written there the first time;
 * in worker process `n`, that id and `-worker-<n>` (the workers of one server count their own
 * requests and share them as separate instances do).
 */
export async function localInstanceId(): Promise<string> {
  const id = await dataDirInstanceId();
  const worker = Deno.env.get(WORKER_ENV);
  return worker && worker !== "0" ? `${id}-worker-${worker}` : id;
}

function dataDirInstanceId(): Promise<string> {
  return instanceId ??= (async () => {
    const path = `${dataDir()}/instance.uuid`;
    try {
      const id = (await Deno.readTextFile(path)).trim();
      if (/^[0-9a-f-]{36}$/i.test(id)) return id;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    const id = crypto.randomUUID();
    await Deno.mkdir(dataDir(), { recursive: true });
    await Deno.writeTextFile(path, id + "\n", { mode: 0o600 });
    return id;
  })().catch((e) => {
    instanceId = null;
    throw e;
  });
}

function valid(v: unknown): v is InstanceState {
  if (typeof v !== "object" || v === null) return false;
  const s = v as Record<string, unknown>;
  if (typeof s.timestamp !== "number" || typeof s.zones !== "object" || s.zones === null) {
    return false;
  }
  for (const keys of Object.values(s.zones)) {
    if (typeof keys !== "object" || keys === null) return false;
    for (const e of Object.values(keys)) {
      if (!Array.isArray(e) || typeof e[0] !== "number" || typeof e[1] !== "number") return false;
    }
  }
  return true;
}

/** The other instances' last known counts, refreshed from storage. */
export class ClusterView {
  readonly #storage: Storage;
  readonly #id: string;
  readonly #purgeMs: number;
  readonly #log: Logger;
  /** The other instances' states as last read. */
  others: InstanceState[] = [];

  /** A view for instance `id` over `storage` (`purgeMs` 0: never delete old files). */
  constructor(storage: Storage, id: string, purgeMs: number, log: Logger) {
    this.#storage = storage;
    this.#id = id;
    this.#purgeMs = purgeMs;
    this.#log = log;
  }

  /** Stores every zone's counts as this instance's state (the plugin's `syncDistributedWrite`). */
  async write(): Promise<void> {
    const now = Date.now();
    const state: InstanceState = { timestamp: now, zones: {} };
    for (const [name, z] of allZones()) state.zones[name] = z.snapshot(now);
    await this.#storage.store(
      `${STATE_PREFIX}/${this.#id}.rlstate`,
      new TextEncoder().encode(JSON.stringify(state)),
    );
  }

  /** Reads the other instances' states (the plugin's `syncDistributedRead`). */
  async read(): Promise<void> {
    let files: string[];
    try {
      files = await this.#storage.list(STATE_PREFIX, false);
    } catch (e) {
      if (isNotFound(e)) {
        this.others = [];
        return;
      }
      throw e;
    }
    const others: InstanceState[] = [];
    const now = Date.now();
    for (const file of files) {
      if (file.endsWith(`/${this.#id}.rlstate`) || !file.endsWith(".rlstate")) continue;
      let state: unknown;
      try {
        state = JSON.parse(new TextDecoder().decode(await this.#storage.load(file)));
      } catch (e) {
        if (isNotFound(e)) continue;
        this.#log.error("unable to load distributed rate limiter state", {
          key: file,
          error: (e as Error).message,
        });
        continue;
      }
      if (!valid(state)) {
        this.#log.error("corrupted rate limiter state file", { key: file });
        continue;
      }
      if (this.#purgeMs > 0 && state.timestamp < now - this.#purgeMs) {
        await this.#storage.delete(file).catch((e) => {
          if (!isNotFound(e)) {
            this.#log.error("cannot delete stale rate limiter state file", {
              key: file,
              error: (e as Error).message,
            });
          }
        });
        continue;
      }
      others.push(state);
    }
    this.others = others;
    this.#log.debug("read distributed rate limit states", {
      instance: this.#id,
      instances: others.length,
    });
  }

  /**
   * The other instances' count for a key of a zone (those that reported within `windowMs`),
   * and the oldest of their events still in the window (`now` when none).
   */
  counts(zone: string, key: string, windowMs: number, now: number): [number, number] {
    let total = 0;
    let oldest = now;
    for (const s of this.others) {
      if (s.timestamp < now - windowMs) continue;
      const e = s.zones[zone]?.[key];
      if (e === undefined) continue;
      total += e[0];
      if (e[1] < oldest && e[1] > now - windowMs) oldest = e[1];
    }
    return [total, oldest];
  }
}

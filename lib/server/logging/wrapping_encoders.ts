/**
 * Encoders that wrap another encoder (`wrap`, default `json`, or `console` when the writer is
 * a terminal), as Caddy's: `filter` (changes the fields named in `fields`, nested names
 * joined by `>` such as `request>headers>Authorization`, with the filter modules of
 * filters.ts), `append` (adds `fields`; a value that is a single placeholder such as
 * `{env.HOST}` or `{system.hostname}` is replaced) and `journald` (prefixes each line with
 * its syslog priority `<N>`, the wrapped console encoder leaving out the time journald adds).
 *
 * @module
 */
import type { ModuleDefinition, ProvisionContext } from "../module/mod.ts";
import { fieldValue, type LogEncoder, type LogEntry } from "./entry.ts";
import { consoleEncoder, jsonEncoder } from "./encoders.ts";
import type { Filtered, LogFieldFilter } from "./filters.ts";
import { Decoder } from "../config/decode.ts";
import { globalPlaceholder } from "../global_placeholders.ts";

/** The wrapped encoder, settled once the writer is known when `wrap` was not given. */
class Wrapped {
  #encoder: LogEncoder;
  readonly isDefault: boolean;
  constructor(encoder: LogEncoder | null, readonly options: { noTime?: boolean } = {}) {
    this.isDefault = encoder === null;
    this.#encoder = encoder ?? jsonEncoder();
  }
  get encoder(): LogEncoder {
    return this.#encoder;
  }
  configureDefault(writerIsTerminal: boolean): void {
    if (!this.isDefault) this.#encoder.configureDefault?.(writerIsTerminal);
    else if (writerIsTerminal) {
      this.#encoder = consoleEncoder(this.options.noTime ? { time_key: "" } : {});
    }
  }
}

async function loadWrapped(
  raw: unknown,
  ctx: ProvisionContext,
  options: { noTime?: boolean } = {},
): Promise<Wrapped> {
  if (raw === undefined || raw === null) return new Wrapped(null, options);
  let obj = raw as Record<string, unknown>;
  // journald drops the console encoder's time: journald stamps every line itself
  if (options.noTime && obj.format === "console" && obj.time_key === undefined) {
    obj = { ...obj, time_key: "" };
  }
  return new Wrapped(
    await ctx.loadModule<LogEncoder>("caddy.logging.encoders", "format", obj),
    options,
  );
}

/** A tree of filters by field path segment. */
interface FilterNode {
  filter?: LogFieldFilter;
  children: Map<string, FilterNode>;
}

function applyFilters(fields: Record<string, unknown>, node: FilterNode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v0] of Object.entries(fields)) {
    const n = node.children.get(k);
    if (!n) {
      out[k] = v0;
      continue;
    }
    let v = fieldValue(v0);
    if (n.filter) {
      const r: Filtered = n.filter.filter(k, v);
      if (r === null) continue;
      out[r.key] = r.value;
      continue;
    }
    if (n.children.size && v !== null && typeof v === "object" && !Array.isArray(v)) {
      v = applyFilters(v as Record<string, unknown>, n);
    }
    out[k] = v;
  }
  return out;
}

/** `caddy.logging.encoders.filter`. */
export const filterEncoderModule: ModuleDefinition<LogEncoder> = {
  id: "caddy.logging.encoders.filter",
  async create(config, ctx) {
    const d = new Decoder(config, "caddy.logging.encoders.filter").fields(["wrap", "fields"]);
    const wrapped = await loadWrapped(config.wrap, ctx);
    const root: FilterNode = { children: new Map() };
    const fields = config.fields ?? {};
    if (typeof fields !== "object" || Array.isArray(fields)) {
      d.fail(`"fields" must be an object of field name to filter`);
    }
    for (const [path, raw] of Object.entries(fields as Record<string, unknown>)) {
      const filter = await ctx.loadModule<LogFieldFilter & { cleanup?: () => void }>(
        "caddy.logging.encoders.filter",
        "filter",
        raw,
      );
      let node = root;
      for (const seg of path.split(">")) {
        let next = node.children.get(seg);
        if (!next) node.children.set(seg, next = { children: new Map() });
        node = next;
      }
      node.filter = filter;
    }
    return {
      configureDefault: (t) => wrapped.configureDefault(t),
      encode(entry: LogEntry) {
        return wrapped.encoder.encode({ ...entry, fields: applyFilters(entry.fields, root) });
      },
    };
  },
};

/** `caddy.logging.encoders.append`. */
export const appendEncoderModule: ModuleDefinition<LogEncoder> = {
  id: "caddy.logging.encoders.append",
  async create(config, ctx) {
    const d = new Decoder(config, "caddy.logging.encoders.append").fields(["wrap", "fields"]);
    const wrapped = await loadWrapped(config.wrap, ctx);
    const raw = config.fields ?? {};
    if (typeof raw !== "object" || Array.isArray(raw)) {
      d.fail(`"fields" must be an object of field name to value`);
    }
    const extra = Object.entries(raw as Record<string, unknown>).map(([k, v]) => {
      if (
        typeof v === "string" && v.startsWith("{") && v.endsWith("}") && !v.slice(1).includes("{")
      ) {
        // one placeholder: its value (global placeholders only: env, system, time), else null
        const get = globalPlaceholder(v.slice(1, -1));
        return [k, () => get?.() ?? null] as const;
      }
      return [k, () => v] as const;
    });
    return {
      configureDefault: (t) => wrapped.configureDefault(t),
      encode(entry: LogEntry) {
        const fields = { ...entry.fields };
        for (const [k, get] of extra) fields[k] = get();
        return wrapped.encoder.encode({ ...entry, fields });
      },
    };
  },
};

const PRIORITY: Record<string, string> = {
  DEBUG: "<7>",
  INFO: "<6>",
  WARN: "<4>",
  ERROR: "<3>",
  PANIC: "<2>",
  FATAL: "<2>",
};

/** `caddy.logging.encoders.journald`. */
export const journaldEncoderModule: ModuleDefinition<LogEncoder> = {
  id: "caddy.logging.encoders.journald",
  async create(config, ctx) {
    new Decoder(config, "caddy.logging.encoders.journald").fields(["wrap"]);
    const wrapped = await loadWrapped(config.wrap, ctx, { noTime: true });
    return {
      configureDefault: (t) => wrapped.configureDefault(t),
      encode(entry: LogEntry) {
        const body = wrapped.encoder.encode(entry);
        const prefix = new TextEncoder().encode(PRIORITY[entry.level] ?? "<6>");
        const out = new Uint8Array(prefix.length + body.length);
        out.set(prefix);
        out.set(body, prefix.length);
        return out;
      },
    };
  },
};

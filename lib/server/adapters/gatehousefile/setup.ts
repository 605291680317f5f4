/**
 * The Gatehousefile adapter's main pass (Caddy's `httpcaddyfile.ServerType.Setup`): global
 * options, named routes, each site's directives into a pile of config values, then servers,
 * the TLS and PKI apps, logging, admin and storage.
 *
 * @module
 */
import type { AdapterWarning } from "../../adapter.ts";
import { didYouMean, Dispenser, siteError, withContext } from "../../caddyfile/dispenser.ts";
import {
  type AdaptContext,
  Helper,
  optionTokens,
  SIDE_VALUES_KEY,
} from "../../caddyfile/helper.ts";
import {
  DEFAULT_DIRECTIVE_ORDER,
  directiveNames,
  getDirective,
  getGlobalOption,
  globalOptionNames,
  parseMatcherDefinition,
} from "../../caddyfile/registry.ts";
import { consolidateAddresses, mapAddresses, type SiteBlock } from "./listeners.ts";
import { assembleLogs, type NamedCustomLog } from "./logs.ts";
import type { Token } from "../../caddyfile/lexer.ts";
import type { ServerBlock } from "../../caddyfile/parser.ts";
import { buildPKIApp } from "./pki_app.ts";
import { normalizeDirectiveName, parseSegmentAsSubroute } from "../../caddyfile/routes.ts";
import { type Invocation, serversFromPairings } from "./servers.ts";
import type { ServerOptions } from "./server_options.ts";
import { expandSegment } from "../../caddyfile/shorthands.ts";
import { buildTLSApp } from "./tls_app.ts";
import type { ConfigValue, MatcherSet, Route } from "../../caddyfile/types.ts";
import { subrouteHandler } from "../../caddyfile/types.ts";

/** The result of the main pass. */
export interface SetupResult {
  /** The native JSON config. */
  config: Record<string, unknown>;
  /** Warnings. */
  warnings: AdapterWarning[];
}

function evaluateGlobalOptions(blocks: ServerBlock[], ctx: AdaptContext): ServerBlock[] {
  if (blocks.length === 0 || blocks[0].keys.length > 0) return blocks;
  const options = ctx.options;
  const scope = { matcherDefs: new Map(), parentBlock: blocks[0], state: {}, blockState: {} };
  for (const segment of blocks[0].segments) {
    const opt = segment[0].text;
    const fn = getGlobalOption(opt);
    if (!fn) {
      throw siteError(
        segment[0],
        `unrecognized global option: ${opt}${didYouMean(opt, globalOptionNames())}`,
      );
    }
    const d = new Dispenser(segment);
    let val: unknown;
    try {
      val = fn(d, options.get(opt), new Helper(segment, ctx, scope));
    } catch (e) {
      throw withContext(e, `parsing caddyfile tokens for '${opt}': `, segment[0]);
    }
    if (!optionTokens(options).has(opt)) optionTokens(options).set(opt, segment[0]);
    if (opt === "servers" || opt === "log" || opt === "default_bind") {
      const prev = (options.get(opt) as unknown[] | undefined) ?? [];
      options.set(opt, [...prev, ...(opt === "servers" ? [val] : val as unknown[])]);
      continue;
    }
    options.set(opt, val);
  }
  const servers = options.get("servers") as ServerOptions[] | undefined;
  if (servers) {
    // most specific listener first (an insertion sort, as Go's for short lists)
    for (let i = 1; i < servers.length; i++) {
      for (
        let j = i;
        j > 0 && servers[j].listenerAddress.length > servers[j - 1].listenerAddress.length;
        j--
      ) [servers[j], servers[j - 1]] = [servers[j - 1], servers[j]];
    }
    const seen = new Set<string>();
    for (const s of servers) {
      if (seen.has(s.listenerAddress)) {
        const message =
          `cannot have 'servers' global options with duplicate listener addresses: ${s.listenerAddress}`;
        throw s.where ? siteError(s.where, message) : new Error(message);
      }
      seen.add(s.listenerAddress);
    }
  }
  return blocks.slice(1);
}

function extractNamedRoutes(blocks: ServerBlock[], ctx: AdaptContext): ServerBlock[] {
  const named = new Map<string, Route>();
  const invokes = new Map<string, Invocation[]>();
  const state: Record<string, unknown> = {};
  const namedCtx: AdaptContext = { ...ctx, groups: { n: 0 } };
  const rest: ServerBlock[] = [];
  const namedSide: ConfigValue[] = [];
  for (const b of blocks) {
    if (!b.isNamedRoute) {
      rest.push(b);
      continue;
    }
    if (b.segments.length === 0) continue;
    for (const seg of b.segments) expandSegment(seg);
    const whole = b.segments.flat();
    const h = new Helper(whole, namedCtx, {
      matcherDefs: new Map(),
      parentBlock: b,
      state,
      blockState: state,
    });
    const routes = parseSegmentAsSubroute(h);
    const side = state[SIDE_VALUES_KEY] as ConfigValue[] | undefined;
    if (side) {
      namedSide.push(...side);
      state[SIDE_VALUES_KEY] = undefined;
    }
    const route: Route = {};
    if (routes.length === 1 && !routes[0].match?.length) {
      route.handle = [routes[0].handle![0]];
    } else route.handle = [subrouteHandler(routes)];
    const key = b.keys[0].text;
    if (named.has(key)) {
      throw siteError(b.keys[0], `cannot have duplicate named_routes: ${key}`);
    }
    named.set(key, route);
    const invoked = state.named_route as Map<string, Token> | undefined;
    if (invoked) {
      const list = [...invoked].map(([name, where]) => ({ name, where }));
      invokes.set(key, [...(invokes.get(key) ?? []), ...list]);
      state.named_route = undefined;
    }
  }
  ctx.options.set("named_routes", named);
  ctx.options.set("named_route_invokes", invokes);
  ctx.options.set("named_route_side_values", namedSide);
  return rest;
}

function evaluateSite(
  b: ServerBlock,
  ctx: AdaptContext,
  state: Record<string, unknown>,
): SiteBlock {
  const pile = new Map<string, ConfigValue[]>();
  for (const seg of b.segments) expandSegment(seg);
  if (b.keys.length === 0) {
    const message =
      "server block without any key is global configuration, and if used, it must be first";
    const first = b.segments[0]?.[0];
    throw first ? siteError(first, message) : new Error(message);
  }
  const matcherDefs = new Map<string, MatcherSet>();
  for (const seg of b.segments) {
    if (seg[0].text.startsWith("@")) parseMatcherDefinition(new Dispenser(seg), matcherDefs);
  }
  for (const seg of b.segments) {
    let dir = seg[0].text;
    if (dir.startsWith("@")) continue;
    const fn = getDirective(dir);
    if (!fn) {
      let msg = `unrecognized directive: ${dir}${didYouMean(dir, directiveNames())}`;
      if (!b.hasBraces) {
        msg +=
          "\nDid you mean to define a second site? If so, you must use curly braces around each site to separate their configurations.";
      }
      throw siteError(seg[0], msg);
    }
    const h = new Helper(seg, ctx, { matcherDefs, parentBlock: b, state, blockState: state });
    let results: ConfigValue[];
    try {
      results = fn(h);
    } catch (e) {
      throw withContext(e, `parsing caddyfile tokens for '${dir}': `, seg[0]);
    }
    dir = normalizeDirectiveName(dir);
    const add = (v: ConfigValue) => pile.set(v.class, [...(pile.get(v.class) ?? []), v]);
    for (const r of results) add({ ...r, directive: dir, token: seg[0] });
    // values that directives in nested blocks produce for the site (e.g. an acme_server's CA)
    for (const v of (state[SIDE_VALUES_KEY] as ConfigValue[] | undefined) ?? []) add(v);
    state[SIDE_VALUES_KEY] = undefined;
    const invoked = state.named_route as Map<string, Token> | undefined;
    if (invoked) {
      for (const [name, token] of invoked) add({ class: "named_route", value: name, token });
      state.named_route = undefined;
    }
  }
  return { block: b, pile, parsedKeys: [] };
}

/** Adapts parsed server blocks to a config (throws with Caddy's messages on errors). */
export function setup(blocks: ServerBlock[], warnings: AdapterWarning[]): SetupResult {
  const ctx: AdaptContext = {
    options: new Map(),
    warnings,
    order: [...DEFAULT_DIRECTIVE_ORDER],
    groups: { n: 0 },
  };
  for (const b of blocks) {
    b.keys.forEach((k, j) => {
      if (j === 0 && k.text.startsWith("@")) {
        throw siteError(k, `cannot define a matcher outside of a site block: '${k.text}'`);
      }
      if (getDirective(k.text)) {
        throw siteError(
          k,
          `parsed '${k.text}' as a site address, but it is a known directive; directives must appear in a site block`,
        );
      }
    });
  }
  let rest = evaluateGlobalOptions(blocks, ctx);
  rest = extractNamedRoutes(rest, ctx);
  const state: Record<string, unknown> = {};
  const sites = rest.map((b) => evaluateSite(b, ctx, state));

  const options = ctx.options;
  const pairings = consolidateAddresses(mapAddresses(sites, options));
  const servers = serversFromPairings(pairings, ctx);

  let metrics = options.get("metrics") as Record<string, unknown> | undefined;
  for (const s of Object.values(servers)) {
    if (s.metrics !== undefined) {
      const m = s.metrics as Record<string, unknown>;
      metrics = { ...(metrics?.per_host || m.per_host ? { per_host: true } : {}) };
      delete s.metrics;
    }
  }

  const http: Record<string, unknown> = {};
  for (const k of ["http_port", "https_port", "grace_period", "shutdown_delay"]) {
    const v = options.get(k);
    if (typeof v === "number" && v !== 0) http[k] = v;
  }
  if (metrics) http.metrics = metrics;
  if (Object.keys(servers).length > 0) http.servers = servers;

  const tls = buildTLSApp(pairings, ctx);
  const pki = buildPKIApp(pairings, options);

  const config: Record<string, unknown> = {};
  const apps: Record<string, unknown> = {};
  for (const [, v] of options) {
    if (v && typeof v === "object" && "appName" in v && "appValue" in v) {
      apps[(v as { appName: string }).appName] = (v as { appValue: unknown }).appValue;
    }
  }
  if (Object.keys(servers).length > 0) apps.http = http;
  if (tls) apps.tls = tls;
  if (pki) apps.pki = pki;
  const fs = options.get("filesystem");
  if (fs) apps["caddy.filesystems"] = fs;
  if (Object.keys(apps).length > 0) config.apps = apps;

  const storage = options.get("storage");
  if (storage) config.storage = storage;
  const admin = options.get("admin") as Record<string, unknown> | undefined;
  if (admin) config.admin = admin;
  if (options.get("persist_config") === "off") {
    const a = (config.admin ??= {}) as Record<string, unknown>;
    a.config = { ...((a.config as object | undefined) ?? {}), persist: false };
  }

  const globalLogs = ((options.get("log") as ConfigValue[] | undefined) ?? []).map((v) =>
    v.value as NamedCustomLog
  );
  const siteLogs: NamedCustomLog[] = [];
  for (const p of pairings) {
    for (const sb of p.blocks) {
      for (const v of sb.pile.get("custom_log") ?? []) siteLogs.push(v.value as NamedCustomLog);
    }
  }
  const logs = assembleLogs(globalLogs, siteLogs, options.has("debug"));
  if (logs) config.logging = { logs };
  return { config: orderKeys(config), warnings };
}

/** Top-level keys in Caddy's order (admin, logging, storage, apps). */
function orderKeys(c: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ["admin", "logging", "storage", "apps"]) if (c[k] !== undefined) out[k] = c[k];
  return out;
}

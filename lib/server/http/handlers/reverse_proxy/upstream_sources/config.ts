/**
 * The config of the dynamic upstream sources of `reverse_proxy` (`dynamic_upstreams`, modules
 * `http.reverse_proxy.upstreams.a`, `.srv` and `.multi`), field by field as Caddy's
 * `AUpstreams`, `SRVUpstreams` and `MultiUpstreams` (`modules/caddyhttp/reverseproxy/
 * upstreams.go`), and their decoder.
 *
 * @module
 */
import { Decoder } from "../../../../config/decode.ts";
import type { Duration } from "../../../../config/duration.ts";
import { checkLookupFields, type LookupFields } from "./resolver.ts";

export type { LookupFields } from "./resolver.ts";

/** `http.reverse_proxy.upstreams.a`: upstreams from A/AAAA records. */
export type ASourceConfig = LookupFields & {
  /** The module name. */
  source: "a";
  /** The name looked up (placeholders allowed); required. */
  name?: string;
  /** The port dialed (placeholders allowed; default 80). */
  port?: string;
  /** How long an answer is used (default 1m). */
  refresh?: Duration;
  /** IPv4 and/or IPv6 (both when neither is set). */
  versions?: { ipv4?: boolean; ipv6?: boolean };
};

/** `http.reverse_proxy.upstreams.srv`: upstreams from SRV records. */
export type SRVSourceConfig = LookupFields & {
  /** The module name. */
  source: "srv";
  /** The service (`_<service>._<proto>.<name>`; placeholders allowed). */
  service?: string;
  /** The protocol (placeholders allowed). */
  proto?: string;
  /** The name (alone when service and proto are empty; placeholders allowed); required. */
  name?: string;
  /** How long an answer is used (default 1m). */
  refresh?: Duration;
  /** How long the last answer keeps serving when a lookup fails (default 0). */
  grace_period?: Duration;
  /** Only `tcp`. */
  dial_network?: string;
};

/** `http.reverse_proxy.upstreams.multi`: the upstreams of several sources, in order. */
export type MultiSourceConfig = {
  /** The module name. */
  source: "multi";
  /** The sources. */
  sources?: UpstreamSourceConfig[];
};

/** A `dynamic_upstreams` module. */
export type UpstreamSourceConfig = ASourceConfig | SRVSourceConfig | MultiSourceConfig;

function decodeA(d: Decoder): ASourceConfig {
  d.fields([
    "source",
    "name",
    "port",
    "refresh",
    "resolver",
    "dial_timeout",
    "dial_fallback_delay",
    "versions",
  ]);
  const out: ASourceConfig = { source: "a" };
  const name = d.string("name") ?? "";
  if (!name) d.fail(`"name" is required`);
  out.name = name;
  const port = d.string("port");
  if (port !== undefined) out.port = port;
  if (d.duration("refresh") !== undefined) out.refresh = d.value("refresh") as Duration;
  Object.assign(out, checkLookupFields(d));
  const versions = d.object("versions");
  if (versions) {
    versions.fields(["ipv4", "ipv6"]);
    // read at the source's path, as they always were
    const at = new Decoder(versions.raw, d.path);
    const v: { ipv4?: boolean; ipv6?: boolean } = {};
    const ipv4 = at.bool("ipv4");
    if (ipv4 !== undefined) v.ipv4 = ipv4;
    const ipv6 = at.bool("ipv6");
    if (ipv6 !== undefined) v.ipv6 = ipv6;
    out.versions = v;
  }
  return out;
}

function decodeSRV(d: Decoder): SRVSourceConfig {
  d.fields([
    "source",
    "service",
    "proto",
    "name",
    "refresh",
    "grace_period",
    "resolver",
    "dial_timeout",
    "dial_fallback_delay",
    "dial_network",
  ]);
  const out: SRVSourceConfig = { source: "srv" };
  const service = d.string("service");
  if (service !== undefined) out.service = service;
  const proto = d.string("proto");
  if (proto !== undefined) out.proto = proto;
  const name = d.string("name") ?? "";
  if (!name) d.fail(`"name" is required`);
  out.name = name;
  const network = d.string("dial_network") ?? "";
  if (network !== "" && network !== "tcp") {
    d.failAt(
      "dial_network",
      `${
        JSON.stringify(network)
      } is not supported (upstreams from SRV records are dialed over tcp)`,
    );
  }
  if (d.has("dial_network")) out.dial_network = network;
  if (d.duration("refresh") !== undefined) out.refresh = d.value("refresh") as Duration;
  if (d.duration("grace_period") !== undefined) {
    out.grace_period = d.value("grace_period") as Duration;
  }
  Object.assign(out, checkLookupFields(d));
  return out;
}

function decodeMulti(d: Decoder): MultiSourceConfig {
  d.fields(["source", "sources"]);
  const out: MultiSourceConfig = { source: "multi" };
  const list = d.array("sources");
  if (list) {
    out.sources = list.map((s, i) => decodeSource(Decoder.of(s, `${d.path}.sources[${i}]`)));
  }
  return out;
}

function decodeSource(d: Decoder): UpstreamSourceConfig {
  const kind = d.string("source");
  switch (kind) {
    case "a":
      return decodeA(d);
    case "srv":
      return decodeSRV(d);
    case "multi":
      return decodeMulti(d);
    default:
      d.fail(
        `unknown upstream source ${JSON.stringify(kind ?? "")} ` +
          `(module http.reverse_proxy.upstreams.<a|srv|multi>)`,
      );
  }
}

/**
 * Decodes and checks a `dynamic_upstreams` source at `where` (its kind, fields, and those of
 * the sources a `multi` holds).
 *
 * @example
 * ```ts
 * import { decodeUpstreamSource } from "./config.ts";
 * decodeUpstreamSource({ source: "a", name: "app.internal" }, "dynamic_upstreams").source; // "a"
 * ```
 */
export function decodeUpstreamSource(raw: unknown, where: string): UpstreamSourceConfig {
  return decodeSource(Decoder.of(raw, where));
}

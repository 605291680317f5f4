/**
 * Where webhooks may go. A webhook's URL is checked when it is saved and again at every
 * delivery attempt, after its name is resolved: loopback, private, link-local, shared (CGNAT),
 * unspecified, metadata, multicast and reserved addresses are refused in every spelling (see
 * `address_class.ts`), as are `localhost`, metadata names and names that only resolve inside a
 * network. The addresses a delivery connects to are exactly the ones checked
 * (`webhook_post.ts`), so a name that resolves to a public address when saved and to an
 * internal one later (DNS rebinding) gets nothing.
 *
 * An operator lets named internal targets through with `allowTargets` (the reference app and
 * `deno task mail`: `MAIL_WEBHOOK_ALLOW`): IP addresses, CIDR ranges and host names, each
 * optionally with a port.
 *
 * @module
 */
import { ipInRanges, type IPRange, parseIP, parseRange } from "../server/net/ip.ts";
import { type AddressClass, classifyHost, classifyIP, describeClass } from "./address_class.ts";
import { MailServerError } from "./errors.ts";

/** Resolves a host name to its addresses (IPv4 and IPv6, as text). */
export type Resolver = (hostname: string) => Promise<string[]>;

/** Settings of the target checks (part of `WebhookOptions`). */
export interface WebhookTargetOptions {
  /**
   * Internal targets webhooks may go to all the same: an IP address (`127.0.0.1`, `::1`,
   * `[::1]`), a CIDR range (`10.20.0.0/16`, `fd00::/8`) or a host name (`hooks.internal`,
   * `localhost`), each but a range optionally with a port (`127.0.0.1:9000`, `[::1]:9000`,
   * `hooks.internal:8443`), which then must be the URL's port (80 or 443 when it has none). An
   * address or range also allows a name that resolves into it; a name allows whatever it
   * resolves to. Default none.
   */
  allowTargets?: readonly string[];
  /**
   * Resolves a webhook's host name at saving and at each delivery (default: the platform's
   * resolution, `node:dns` `lookup`, which reads the hosts file as a connection would).
   */
  resolve?: Resolver;
  /** Longest wait for the resolution at saving, ms (default 5000; past it the URL is saved). */
  saveResolveTimeoutMs?: number;
}

/** One `allowTargets` entry. */
type AllowRule =
  | { kind: "range"; range: IPRange; port: number | null }
  | { kind: "name"; name: string; port: number | null };

/** A target refused at delivery: the attempt fails at once and is not retried. */
export class WebhookTargetRefused extends Error {
  /** Creates the refusal with its reason. */
  constructor(message: string) {
    super(message);
    this.name = "WebhookTargetRefused";
  }
}

/** An address a delivery may connect to. */
export interface CheckedAddress {
  /** The IP address, as text. */
  address: string;
  /** 4 or 6. */
  family: 4 | 6;
}

const HOW_TO_ALLOW = "Webhooks do not go to internal addresses; an operator can allow this " +
  "target with the webhook setting allowTargets (MAIL_WEBHOOK_ALLOW in the reference app and " +
  "`deno task mail`).";

function portOf(text: string, entry: string): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65535) {
    throw new Error(`webhook allowTargets: ${JSON.stringify(entry)} has a bad port`);
  }
  return port;
}

/**
 * Parses `allowTargets`; throws an Error naming the entry that is neither an address, a range
 * nor a host name (with an optional port).
 *
 * @example
 * ```ts
 * import { parseAllowTargets } from "./webhook_targets.ts";
 * parseAllowTargets(["127.0.0.1:9000", "10.20.0.0/16", "hooks.internal"]).length; // 3
 * ```
 */
export function parseAllowTargets(list: readonly string[]): AllowRule[] {
  const rules: AllowRule[] = [];
  for (const raw of list) {
    const entry = String(raw).trim();
    const bad = () =>
      new Error(
        `webhook allowTargets: ${JSON.stringify(raw)} is not an IP address, a CIDR range or a ` +
          "host name (each but a range may end with :port)",
      );
    if (entry === "") throw bad();
    if (entry.includes("/")) {
      try {
        rules.push({ kind: "range", range: parseRange(entry), port: null });
      } catch {
        throw bad();
      }
      continue;
    }
    let host = entry;
    let port: number | null = null;
    const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(entry);
    if (bracketed) {
      host = bracketed[1];
      if (bracketed[2] !== undefined) port = portOf(bracketed[2], raw);
    } else if ((entry.match(/:/g) ?? []).length === 1) {
      host = entry.slice(0, entry.indexOf(":"));
      port = portOf(entry.slice(entry.indexOf(":") + 1), raw);
    }
    if (parseIP(host) !== null) {
      rules.push({ kind: "range", range: parseRange(host), port });
      continue;
    }
    let name: string;
    try {
      name = new URL(`http://${host}/`).hostname;
    } catch {
      throw bad();
    }
    if (name === "" || host.includes("@")) throw bad();
    const spelled = classifyHost(name);
    if (spelled.kind === "ip") {
      // another spelling of an address (`2130706433`, `0x7f.1`)
      rules.push({ kind: "range", range: parseRange(spelled.address), port });
      continue;
    }
    rules.push({ kind: "name", name: name.replace(/\.$/, ""), port });
  }
  return rules;
}

/** The default resolver: the platform's (`node:dns` `lookup`, hosts file included). */
export const platformResolver: Resolver = async (hostname) => {
  const dns = await import("node:dns/promises");
  const found = await dns.lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => a.address);
};

/** The outcome of checking a URL. */
type Verdict =
  | { ok: true; addresses: CheckedAddress[] | null }
  | { ok: false; reason: string };

/** Where webhooks may go: the checks at saving and at delivery. */
export class WebhookTargets {
  readonly #rules: AllowRule[];
  readonly #resolve: Resolver;
  readonly #saveTimeout: number;

  /** Parses the settings (throws naming a bad `allowTargets` entry). */
  constructor(options: WebhookTargetOptions = {}) {
    this.#rules = parseAllowTargets(options.allowTargets ?? []);
    this.#resolve = options.resolve ?? platformResolver;
    this.#saveTimeout = options.saveResolveTimeoutMs ?? 5000;
  }

  #allowedIP(ip: bigint, port: number): boolean {
    return this.#rules.some((r) =>
      r.kind === "range" && (r.port === null || r.port === port) && ipInRanges(ip, [r.range])
    );
  }

  #allowedName(name: string, port: number): boolean {
    return this.#rules.some((r) =>
      r.kind === "name" && r.name === name && (r.port === null || r.port === port)
    );
  }

  /**
   * The checks of one URL. A name is resolved: at delivery (`required`) a failure is an error;
   * at saving (`if-answered`) a name without an answer within the limit passes.
   */
  async #verdict(url: URL, resolve: "required" | "if-answered"): Promise<Verdict> {
    const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
    const host = classifyHost(url.hostname);
    if (host.kind === "ip") {
      if (host.class === "public" || this.#allowedIP(host.ip, port)) {
        return { ok: true, addresses: [{ address: host.address, family: familyOf(host.address) }] };
      }
      return { ok: false, reason: `${url.host} is ${describeClass(host.class)}.` };
    }
    const named = this.#allowedName(host.name, port);
    if (!named && host.class !== "public") {
      return { ok: false, reason: `${host.name} is ${describeClass(host.class)}.` };
    }
    let found: string[];
    if (resolve === "required") {
      try {
        found = await this.#resolve(url.hostname);
      } catch (err) {
        throw new Error(`resolving ${host.name}: ${(err as Error).message}`);
      }
      if (found.length === 0) throw new Error(`resolving ${host.name}: no address`);
    } else {
      const answer = await this.#resolveWithin(url.hostname);
      if (answer === null) return { ok: true, addresses: null };
      found = answer;
    }
    const addresses: CheckedAddress[] = [];
    for (const a of found) {
      const ip = parseIP(a);
      if (ip === null) {
        throw new Error(`resolving ${host.name}: ${JSON.stringify(a)} is not an address`);
      }
      const cls: AddressClass = classifyIP(ip);
      if (!named && cls !== "public" && !this.#allowedIP(ip, port)) {
        return { ok: false, reason: `${host.name} resolves to ${a}, ${describeClass(cls)}.` };
      }
      const address = a.replace(/^\[|\]$/g, "");
      addresses.push({ address, family: familyOf(address) });
    }
    return { ok: true, addresses };
  }

  /** The name's addresses, or null when it does not resolve within the saving limit. */
  async #resolveWithin(name: string): Promise<string[] | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<null>((
      r,
    ) => (timer = setTimeout(() => r(null), this.#saveTimeout)));
    try {
      const found = await Promise.race([this.#resolve(name).catch(() => null), expired]);
      return found && found.length ? found : null;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * At saving: throws code 9422 naming the reason when `url` targets an internal address or
   * name not allowed. A name is resolved (within the saving limit) and each address checked;
   * a name that does not resolve yet is saved, as every delivery checks again.
   */
  async checkSaved(url: URL): Promise<void> {
    const v = await this.#verdict(url, "if-answered");
    if (!v.ok) throw new MailServerError(9422, `${v.reason} ${HOW_TO_ALLOW}`);
  }

  /**
   * At delivery: the addresses to connect to, every one checked. Throws
   * {@linkcode WebhookTargetRefused} for a target not allowed, and an Error when the name
   * does not resolve.
   */
  async addresses(url: URL): Promise<CheckedAddress[]> {
    const v = await this.#verdict(url, "required");
    if (!v.ok) throw new WebhookTargetRefused(`refused: ${v.reason} ${HOW_TO_ALLOW}`);
    return v.addresses!;
  }
}

function familyOf(address: string): 4 | 6 {
  return address.includes(":") ? 6 : 4;
}

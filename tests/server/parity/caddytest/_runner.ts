/**
 * Runs Caddy's integration scenarios against one `gatehouse run` process, as caddytest does
 * against Caddy: the process starts with the Caddyfile `{ admin localhost:<port> }` (caddytest's
 * `initConfig`) in the `caddytest/integration` working directory of {@linkcode makeTree}, and
 * each scenario's configs are posted to its `/load` in turn (`InitServer`: `Content-Type:
 * text/caddyfile` or `application/json`, JSON normalised first), then checked as running
 * (`ensureConfigRunning`: `GET /config/` equals the posted JSON, or the Caddyfile's adaptation).
 * A step that fails is recorded and the scenario goes on, as `t.Errorf` does; the scenario's
 * failures are its result.
 */
import { isDeepStrictEqual } from "node:util";
import { type CliProcess, freePort, spawnCli, tempEnv, until } from "../../fixtures/helpers.ts";
import { closeClient, type Response, send } from "./_client.ts";
import type { Peer } from "./_peers.ts";
import { CADDY_PORTS, type Config, type Context, type Expect, type Scenario } from "./_scenario.ts";
import { certificatePaths, makeTree, type Tree } from "./_tree.ts";

const TYPES = { caddyfile: "text/caddyfile", json: "application/json" };
/** How long a written-out check may take (a client waiting for an answer that never comes). */
const STEP_MS = 60_000;

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result after ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The process and what the scenarios share. */
export interface Runner {
  /** Runs a scenario; its failures (none when it passed). */
  run(s: Scenario): Promise<string[]>;
  /** The process's output so far (for a failing scenario's report). */
  output(): string;
  stop(): Promise<void>;
}

async function post(url: string, body: string, type: string): Promise<Response> {
  const r = await fetch(url, {
    method: "POST",
    body,
    headers: { "content-type": type },
    signal: AbortSignal.timeout(30_000),
  });
  return { status: r.status, version: "1.1", headers: r.headers, body: await r.text() };
}

/** Starts the process. */
export async function startRunner(): Promise<Runner> {
  const tree: Tree = await makeTree();
  const env = await tempEnv();
  const ports = new Map<number, number>(CADDY_PORTS.map((p) => [p, freePort()]));
  const admin = `http://127.0.0.1:${ports.get(2999)}`;
  const initFile = `${env.dir}/init.caddyfile`;
  await Deno.writeTextFile(initFile, `{\n\tadmin localhost:${ports.get(2999)}\n}\n`);
  let proc: CliProcess;
  let earlier = "";
  const start = async () => {
    proc = spawnCli(
      ["run", "--config", initFile, "--adapter", "caddyfile"],
      env.env,
      tree.integration,
    );
    await until(
      async () => (await fetch(`${admin}/config/`)).ok,
      30_000,
      "the admin API of gatehouse run",
    );
  };
  await start();
  const adminUp = async () => {
    try {
      return (await fetch(`${admin}/config/`, { signal: AbortSignal.timeout(5000) })).ok;
    } catch {
      return false;
    }
  };

  const port = (p: number) => {
    const free = ports.get(p);
    if (free === undefined) throw new Error(`port ${p} is not one of Caddy's test ports`);
    return free;
  };

  const run = async (s: Scenario): Promise<string[]> => {
    const failures: string[] = [];
    const peers: Record<string, Peer> = {};
    const sub = (text: string) => {
      let out = text.replace(/%\[(\w+)\]/g, (_, name: string) => {
        const peer = peers[name];
        if (!peer) throw new Error(`no peer ${name}`);
        return peer.addr;
      });
      for (const [p, free] of ports) {
        out = out.replace(new RegExp(`(?<!\\d)${p}(?!\\d)`, "g"), String(free));
      }
      return out;
    };
    const tmp = await Deno.makeTempDir({ prefix: "gatehouse-caddytest-peers-" });
    const ctx: Context = {
      port,
      sub,
      peers,
      admin,
      caddytest: tree.caddytest,
      send: (r) =>
        send({
          ...r,
          url: sub(r.url),
          headers: r.headers &&
            Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, sub(v)])),
          body: typeof r.body === "string" ? sub(r.body) : r.body,
        }),
    };
    const prepare = (c: Config) => {
      const text = certificatePaths(sub(c.text), tree.caddytest);
      return c.type === "json" ? JSON.stringify(JSON.parse(text)) : text;
    };
    try {
      for (const [name, spec] of Object.entries(s.peers ?? {})) {
        peers[name] = await spec({ port, tmp });
      }
    } catch (e) {
      failures.push(`starting the test's own servers: ${(e as Error).message}`);
    }
    try {
      for (const step of failures.length ? [] : s.steps) {
        try {
          if ("init" in step) {
            const text = prepare(step.init);
            const r = await post(`${admin}/load`, text, TYPES[step.init.type]);
            if (r.status !== 200) {
              failures.push(`failed to load config: ${r.body}`);
              continue;
            }
            const want = step.init.type === "json"
              ? JSON.parse(text)
              : JSON.parse((await post(`${admin}/adapt`, text, TYPES.caddyfile)).body).result;
            const got = JSON.parse(await (await fetch(`${admin}/config/`)).text());
            if (!isDeepStrictEqual(want, got)) {
              failures.push(
                `POSTed configuration isn't active: ${JSON.stringify(got)} (posted ${
                  JSON.stringify(want)
                })`,
              );
            }
          } else if ("loadError" in step) {
            const r = await post(
              `${admin}/load`,
              prepare(step.loadError),
              TYPES[step.loadError.type],
            );
            const want = sub(step.contains);
            if (r.status === 200) failures.push(`loaded; expected error "${want}"`);
            else if (!r.body.includes(want)) {
              failures.push(`expected error "${want}" but got "${r.body.trim()}"`);
            }
          } else if ("adapt" in step) {
            const r = await post(`${admin}/adapt`, sub(step.adapt), TYPES.caddyfile);
            if (r.status !== 200) {
              failures.push(`adapting config using caddyfile adapter: ${r.body}`);
              continue;
            }
            const got = JSON.stringify(JSON.parse(r.body).result, null, "\t");
            const want = sub(step.expect);
            if (got !== want) failures.push(`adapted differently: ${lineDiff(got, want)}`);
          } else if ("request" in step) {
            const url = sub(step.request.url);
            const res = await ctx.send(step.request);
            failures.push(...compare(url, res, step.expect, sub));
          } else {
            await withTimeout(Promise.resolve(step.run(ctx)), STEP_MS, step.check);
          }
        } catch (e) {
          failures.push(`${"check" in step ? `${step.check}: ` : ""}${(e as Error).message}`);
        }
      }
    } finally {
      for (const p of Object.values(peers)) await p.close().catch(() => {});
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
    if (!(await adminUp())) {
      failures.push("the admin API stopped answering: the process is started again");
      earlier += proc!.output();
      proc!.child.kill("SIGKILL");
      await proc!.status;
      await start();
    }
    return failures;
  };

  return {
    run,
    output: () => earlier + proc.output(),
    async stop() {
      proc.child.kill("SIGTERM");
      await proc.status;
      await closeClient();
      await tree.remove();
      await Deno.remove(env.dir, { recursive: true }).catch(() => {});
    },
  };
}

/** The Go assertions of `AssertResponse`, `AssertRedirect` and `err != nil`, as messages. */
function compare(url: string, res: Response, want: Expect, sub: (s: string) => string): string[] {
  const out: string[] = [];
  if (want.fails) {
    if (!res.error) out.push(`requesting "${url}": unexpected response: ${res.status}`);
    return out;
  }
  if (res.error) return [`requesting "${url}": failed to call server ${res.error}`];
  if (want.status !== undefined && res.status !== want.status) {
    out.push(`requesting "${url}" expected status code: ${want.status} but got ${res.status}`);
  }
  if (want.body !== undefined && res.body !== sub(want.body)) {
    out.push(
      `requesting "${url}" expected response body "${sub(want.body)}" but got "${res.body}"`,
    );
  }
  if (want.contains !== undefined && !res.body.includes(sub(want.contains))) {
    out.push(`requesting "${url}" expected the body to contain "${sub(want.contains)}"`);
  }
  for (const [k, v] of Object.entries(want.headers ?? {})) {
    const got = res.headers.get(k);
    const expected = v === null ? null : sub(v);
    if (got !== expected) out.push(`requesting "${url}" header ${k}: ${got} (want ${expected})`);
  }
  if (want.location !== undefined) {
    const loc = res.headers.get("location");
    const resolved = loc === null
      ? null
      : /^[a-z][a-z0-9+.-]*:/i.test(loc)
      ? loc
      : new URL(loc, url).href;
    if (resolved !== sub(want.location)) {
      out.push(
        `requesting "${url}" expected location: "${sub(want.location)}" but got "${resolved}"`,
      );
    }
  }
  return out;
}

/** The first lines where `got` and `want` differ, with the path of keys above them. */
function lineDiff(got: string, want: string): string {
  const a = got.split("\n");
  const b = want.split("\n");
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  const keys = a.slice(0, i).map((l) => /^\t*"([^"]+)":/.exec(l)?.[1]).filter(Boolean).slice(-4);
  const show = (l: string[]) => l.slice(i, i + 4).map((x) => x.trim()).join(" ");
  return `after ${keys.join(" > ")} (line ${i + 1}): got ${show(a)} ... want ${show(b)} ...`;
}

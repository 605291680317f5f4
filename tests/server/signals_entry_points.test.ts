/**
 * SIGUSR1 opens no inspector in any long-running entry point besides the server commands
 * (signals.test.ts): `deno task start` (the reference app), `deno task mail` (the mail API on
 * its own), `deno task mail:listen` and `deno task mail:replay`. Each runs as a real process
 * with the command line its task declares in deno.json; after SIGUSR1 it owns exactly the
 * listening sockets it owned before (no 9229, no other new port), 9229 still refuses, nothing
 * says "Debugger listening", and the process is alive and still answers.
 */
import assert from "node:assert/strict";
import { freePort, ROOT, until } from "./fixtures/helpers.ts";
import { alive, listeningSockets, refuses } from "./fixtures/sockets.ts";

const INSPECTOR_PORT = 9229;
/** Deno arms its SIGUSR1 inspector trigger 500 ms after start; wait well past it. */
const ARMED_MS = 1500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The arguments after `deno` of a task in deno.json (e.g. `run -A app/main.ts`). */
function taskArgs(name: string): string[] {
  const tasks = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`)).tasks;
  const words = String(tasks[name]).split(/\s+/);
  assert.equal(words[0], "deno", `task ${name} runs deno`);
  return words.slice(1);
}

/** What deno itself needs from the environment. */
function inherited(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

interface Proc {
  pid: number;
  output: () => string;
  stop: () => Promise<void>;
}

/** Spawns `deno <task's args> ...extra` in the project root with only `env` set. */
function spawnTask(task: string, extra: string[], env: Record<string, string>): Proc {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...taskArgs(task), ...extra],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...inherited(), ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const pump = async (s: ReadableStream<Uint8Array<ArrayBuffer>>) => {
    for await (const t of s.pipeThrough(new TextDecoderStream())) out += t;
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  return {
    pid: child.pid,
    output: () => out,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* exited */ }
      await child.status;
      await pumps;
    },
  };
}

/** Waits for `re` in the output; returns its match. */
async function waitFor(p: Proc, re: RegExp): Promise<RegExpMatchArray> {
  let m: RegExpMatchArray | null = null;
  await until(() => (m = p.output().match(re)) !== null, 60000, `${re} in:\n${p.output()}`);
  return m!;
}

/**
 * Sends SIGUSR1 once Deno armed its trigger, then checks that nothing else happened: same
 * listening sockets, 9229 still refusing, no debugger line, alive, and `answers()` still true.
 */
async function checkSigusr1(p: Proc, answers: () => Promise<boolean>): Promise<void> {
  assert.ok(await answers(), "answers before the signal");
  await sleep(ARMED_MS);
  const before = await listeningSockets(p.pid);
  const inspectorFree = await refuses(INSPECTOR_PORT);
  Deno.kill(p.pid, "SIGUSR1");
  await sleep(1000);
  assert.ok(alive(p.pid), "the process is still running");
  assert.deepEqual(await listeningSockets(p.pid), before, "no new listening socket");
  if (inspectorFree) assert.ok(await refuses(INSPECTOR_PORT), "9229 still refuses");
  assert.doesNotMatch(p.output(), /Debugger listening|inspector/i);
  assert.doesNotMatch(p.output(), /SIGUSR1 cannot be ignored/, "the guard worked");
  assert.ok(await answers(), "still answers");
}

async function status(url: string, init?: RequestInit): Promise<number> {
  const r = await fetch(url, init);
  await r.body?.cancel();
  return r.status;
}

Deno.test("deno task start: SIGUSR1 opens no inspector; the app still answers", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-sig-" });
  const p = spawnTask("start", [], {
    PORT: "0",
    DATABASE_URL: `file:${dir}/app.db`,
    MAIL_BLOB_DIR: `${dir}/blobs`,
  });
  try {
    const [, origin] = await waitFor(p, /listening on (http:\/\/127\.0\.0\.1:\d+)\//);
    await checkSigusr1(p, async () => await status(`${origin}/`) === 200);
  } finally {
    await p.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task mail: SIGUSR1 opens no inspector; the mail API still answers", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-sig-" });
  const p = spawnTask("mail", [], {
    PORT: "0",
    MAIL_DB: `file:${dir}/mail.db`,
    MAIL_BLOB_DIR: `${dir}/blobs`,
  });
  try {
    const [, base] = await waitFor(p, /Mail-scanning API on (http:\/\/127\.0\.0\.1:\d+\S*)/);
    // an unauthenticated request gets the API's 401: the server answers
    await checkSigusr1(p, async () => await status(`${base}/items`) === 401);
  } finally {
    await p.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task mail:listen: SIGUSR1 opens no inspector; the listener still answers", async () => {
  const p = spawnTask("mail:listen", [
    "--secret",
    "whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3Q=",
    "--port",
    "0",
    "--forward-to",
    `http://127.0.0.1:${freePort()}/hooks`,
  ], {});
  try {
    const [, url] = await waitFor(p, /Listening on (http:\/\/127\.0\.0\.1:\d+\/)/);
    // an unsigned delivery is refused with 401 and forwarded nowhere
    await checkSigusr1(p, async () => await status(url, { method: "POST", body: "{}" }) === 401);
  } finally {
    await p.stop();
  }
});

Deno.test("deno task mail:replay: SIGUSR1 opens no inspector while it waits on the mail API", async () => {
  // a mail API that accepts the connection and never answers: replay waits for it
  const api = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const c of api) held.push(c);
  })();
  const p = spawnTask("mail:replay", [
    "88",
    "--api",
    `http://127.0.0.1:${api.addr.port}/api/account-docs/v2`,
    "--secret",
    "whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3Q=",
    "--forward-to",
    `http://127.0.0.1:${freePort()}/hooks`,
  ], { MAIL_OPERATOR_TOKEN: "operator-token-for-the-test" });
  try {
    await until(() => held.length > 0, 60000, "replay to reach the mail API");
    // it still waits for its answer: alive, its connection open
    await checkSigusr1(p, () => Promise.resolve(alive(p.pid) && held.length === 1));
  } finally {
    await p.stop();
    for (const c of held) c.close();
    api.close();
    await accepting.catch(() => {});
  }
});

Deno.test("without the ffi permission an entry point says at start that SIGUSR1 is not covered", async () => {
  const args = taskArgs("mail:listen");
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      args[0],
      "--deny-ffi",
      ...args.slice(1),
      "--secret",
      "whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3Q=",
      "--port",
      "0",
      "--forward-to",
      `http://127.0.0.1:${freePort()}/hooks`,
    ],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...inherited() },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const pump = async (s: ReadableStream<Uint8Array<ArrayBuffer>>) => {
    for await (const t of s.pipeThrough(new TextDecoderStream())) out += t;
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  try {
    await until(() => out.includes("Listening on"), 60000, `the listener to start:\n${out}`);
    assert.match(out, /warning: SIGUSR1 cannot be ignored \(no_ffi\).*--allow-ffi/);
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await pumps;
  }
});

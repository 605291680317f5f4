/**
 * The shell lines of README's web server quick start, each run as pasted with bash in a copy
 * of the clone (this checkout's files copied into a temp directory, its `node_modules` linked,
 * so the Gatehousefile the quick start writes lands there), and the answers each one gives. The fixed
 * ports the lines use (8080, 8443, the admin API's 2019) are theirs: `readme_shell.test.ts`
 * runs this program in network, user and process namespaces of its own (`unshare`), where the
 * loopback interface is its alone and every process it started ends with it.
 *
 * Prints one line per README line it ran ("ok <line>" or "skipped <line>: why") and exits 0;
 * the first answer that is not the expected one fails with the line and its output.
 *
 * @module
 */
import assert from "node:assert/strict";
import { until } from "../server/fixtures/helpers.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The `sh` blocks of README's web server section, line by line. */
export function quickStartLines(readme: string): string[][] {
  const start = readme.indexOf("### Web server");
  assert.ok(start >= 0, "README has a web server quick start");
  const end = readme.indexOf("\n## ", start);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    m[1].split("\n").filter((l) => l.trim() !== "")
  );
}

/** A line's command: what comes before its `#` comment (if any), trimmed. */
export function command(line: string): string {
  return line.replace(/\s+#\s.*$/, "").trim();
}

/** A line started with bash in the clone. */
class Line {
  #out = "";
  #stdout = "";
  readonly child: Deno.ChildProcess;
  readonly done: Promise<Deno.CommandStatus>;
  constructor(readonly line: string, cwd: string, env: Record<string, string>) {
    // a process group of its own, as a terminal's foreground job: Ctrl-C reaches all of it
    this.child = new Deno.Command("setsid", {
      args: ["bash", "-c", line],
      cwd,
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const drain = async (s: ReadableStream<Uint8Array>, isOut: boolean) => {
      const d = new TextDecoder();
      for await (const c of s) {
        const t = d.decode(c, { stream: true });
        this.#out += t;
        if (isOut) this.#stdout += t;
      }
    };
    const drained = Promise.all([drain(this.child.stdout, true), drain(this.child.stderr, false)]);
    this.done = this.child.status.then(async (s) => (await drained, s));
  }
  /** What it wrote, stdout and stderr as they came. */
  output(): string {
    return this.#out;
  }
  /** What it wrote on stdout. */
  stdout(): string {
    return this.#stdout;
  }
  /** Ends a line that serves until stopped, as Ctrl-C in its terminal. */
  async stop(): Promise<void> {
    try {
      Deno.kill(-this.child.pid, "SIGINT");
    } catch { /* ended */ }
    await this.done;
  }
}

/** Runs a line to its end; fails unless it exits 0. */
async function finish(l: Line): Promise<string> {
  const status = await l.done;
  assert.equal(status.code, 0, `${l.line}\n${l.output()}`);
  return l.stdout();
}

async function text(url: string, init?: RequestInit): Promise<string> {
  const res = await fetch(url, init);
  return await res.text();
}

/** What each line of the quick start answers, by its command. */
type Expect = (l: Line, ctx: { clone: string }) => Promise<void>;

const GATEHOUSEFILE = 'localhost:8443 {\n\trespond "Hello over HTTPS"\n}\n';

/** Lines that serve until stopped: started, checked, then stopped unless `keep`. */
const EXPECT: Record<string, { expect: Expect; keep?: boolean } | { skip: string }> = {
  "deno install": { expect: async (l) => void await finish(l) },
  'deno run -A cli.ts respond "Hello"': {
    async expect(l) {
      let address = "";
      await until(
        () => {
          address = l.output().match(/Server address: (\S+)/)?.[1] ?? "";
          return address !== "";
        },
        60000,
        "the address respond prints",
      );
      assert.equal(await text(`http://${address}/`), "Hello");
    },
  },
  "deno run -A cli.ts file-server --listen 127.0.0.1:8080 --browse": {
    async expect() {
      let page = "";
      await until(
        async () => {
          page = await text("http://127.0.0.1:8080/", { headers: { accept: "text/html" } });
          return true;
        },
        60000,
        "the file server",
      );
      // the listing of the clone's directory
      assert.match(page, /cli\.ts/);
      assert.match(page, /README\.md/);
    },
  },
  "deno run -A cli.ts help": {
    async expect(l) {
      const out = await finish(l);
      for (const name of ["run", "respond", "file-server", "trust", "adapt"]) {
        assert.match(out, new RegExp(`^\\s+${name}\\b`, "m"), `help lists ${name}`);
      }
    },
  },
  [`printf 'localhost:8443 {\\n\\trespond "Hello over HTTPS"\\n}\\n' > Gatehousefile`]: {
    async expect(l, { clone }) {
      await finish(l);
      assert.equal(await Deno.readTextFile(`${clone}/Gatehousefile`), GATEHOUSEFILE);
    },
  },
  "deno run -A cli.ts run": {
    keep: true, // the next lines run "in another terminal"
    async expect(l) {
      await until(
        async () => {
          await text("http://localhost:2019/config/");
          return true;
        },
        60000,
        "the admin API",
      );
      assert.match(l.output(), /using adjacent Gatehousefile/);
    },
  },
  "curl --cacert <(curl -s localhost:2019/pki/ca/local/certificates) https://localhost:8443/": {
    async expect(l, ctx) {
      // the server obtains its certificate just after it starts: the line is run again (as a
      // reader would) until it answers
      let last = l;
      await until(
        async () => {
          if ((await last.done).code === 0 && last.stdout() === "Hello over HTTPS") return true;
          last = new Line(l.line, ctx.clone, ENV);
          return false;
        },
        60000,
        "the HTTPS answer",
      );
    },
  },
  "deno run -A cli.ts trust": {
    skip: "it installs the local CA into this machine's trust stores (tests/server/pki/" +
      "trust.test.ts runs trust and untrust, removing what it installs)",
  },
  "deno run -A cli.ts adapt -p": {
    async expect(l) {
      const json = JSON.parse(await finish(l));
      ADAPTED = json;
      const servers = Object.values(json.apps.http.servers) as { listen: string[] }[];
      assert.deepEqual(servers.map((s) => s.listen), [[":8443"]]);
      assert.match(JSON.stringify(json), /Hello over HTTPS/);
    },
  },
  "curl localhost:2019/config/": {
    async expect(l) {
      const running = JSON.parse(await finish(l));
      assert.deepEqual(
        running.apps.http,
        ADAPTED?.apps.http,
        "the running config is the adapted one",
      );
    },
  },
};

let ADAPTED: { apps: { http: unknown } } | null = null;
let ENV: Record<string, string> = {};

/** Names left out of the copy at any depth; `node_modules` at the top is linked instead. */
const NOT_COPIED = new Set(["node_modules", ".git"]);
/** Paths left out: what builds, tests and runs write (git ignores them), and the quick start's. */
const NOT_COPIED_PATHS = new Set([
  "npm",
  ".data",
  "artefacts",
  "bench/.data",
  "tests/e2e/screenshots",
  "Gatehousefile",
  "Caddyfile",
]);

async function copyTree(from: string, to: string, path = ""): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    const rel = path ? `${path}/${e.name}` : e.name;
    if (NOT_COPIED.has(e.name) || NOT_COPIED_PATHS.has(rel)) continue;
    if (e.isDirectory) await copyTree(`${from}/${e.name}`, `${to}/${e.name}`, rel);
    else if (e.isFile) await Deno.copyFile(`${from}/${e.name}`, `${to}/${e.name}`);
  }
}

/**
 * A directory standing for the clone: a copy of this checkout's files (what the file server
 * lists is real files, as in a clone), its installed `node_modules` linked in.
 */
async function cloneDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-readme-shell-" });
  await copyTree(ROOT.replace(/\/$/, ""), dir);
  await Deno.symlink(`${ROOT}node_modules`, `${dir}/node_modules`);
  return dir;
}

if (import.meta.main) {
  const clone = await cloneDir();
  const home = await Deno.makeTempDir({ prefix: "gatehouse-readme-shell-home-" });
  ENV = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: `${home}/config`,
    XDG_DATA_HOME: `${home}/data`,
    NO_COLOR: "1",
  };
  // Deno's cache and the test run's server settings, as the reader's shell has its own
  for (const name of ["DENO_DIR", "GATEHOUSE_WORKERS"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) ENV[name] = value;
  }
  const running: Line[] = [];
  try {
    const blocks = quickStartLines(await Deno.readTextFile(`${ROOT}README.md`));
    assert.equal(blocks.length, 2, "the quick start's two sh blocks");
    for (const block of blocks) {
      for (const line of block) {
        if (line.trim().startsWith("#")) continue; // "# in another terminal:"
        const what = EXPECT[command(line)];
        assert.ok(what, `README line this test does not know: ${line}`);
        if ("skip" in what) {
          console.log(`skipped ${line}: ${what.skip}`);
          continue;
        }
        const l = new Line(line, clone, ENV);
        try {
          await what.expect(l, { clone });
        } catch (e) {
          throw new Error(`${line}\n${(e as Error).message}\n--- its output:\n${l.output()}`);
        } finally {
          if (what.keep) running.push(l);
          else await l.stop();
        }
        console.log(`ok ${line}`);
      }
    }
    const unseen = Object.keys(EXPECT).filter((c) =>
      !blocks.flat().some((line) => command(line) === c)
    );
    assert.deepEqual(unseen, [], "lines this test expects that README no longer has");
  } finally {
    for (const l of running) await l.stop();
    // the link first: nothing of the checkout is removed through it
    await Deno.remove(`${clone}/node_modules`);
    await Deno.remove(clone, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
}

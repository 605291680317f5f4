import assert from "node:assert/strict";
import bcrypt from "bcryptjs";
import zlib from "node:zlib";
import { freePort } from "./harness.ts";
import { raw } from "./raw.ts";

const CLI = new URL("../../../cli.ts", import.meta.url).pathname;

interface Proc {
  child: Deno.ChildProcess;
  stdout: () => string;
  stop(): Promise<number>;
}

function spawn(args: string[], stdin?: string): Proc {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    w.write(new TextEncoder().encode(stdin)).then(() => w.close());
  }
  let out = "";
  const dec = new TextDecoder();
  const reading = child.stdout.pipeTo(
    new WritableStream({ write: (c) => void (out += dec.decode(c)) }),
  );
  const errText = new Response(child.stderr).text();
  return {
    child,
    stdout: () => out,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* exited */ }
      const st = await child.status;
      await reading;
      await errText;
      return st.code;
    },
  };
}

async function waitFor(url: string, init: Record<string, string> = {}): Promise<void> {
  for (let i = 0; i < 150; i++) {
    try {
      await raw(url, "GET", "/__ready", init);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`server at ${url} did not come up`);
}

Deno.test("cli respond: port range, templating, status argument, headers, stdin body, printed addresses", async () => {
  let p = freePort();
  while (true) {
    try {
      Deno.listen({ hostname: "127.0.0.1", port: p + 1 }).close();
      break;
    } catch {
      p = freePort();
    }
  }
  const proc = spawn([
    "respond",
    "--listen",
    `127.0.0.1:${p}-${p + 1}`,
    "-H",
    "X-Test: yes",
    "--body",
    "srv {{.N}} port {{.Port}} at {{.Address}}",
    "201",
  ]);
  try {
    await waitFor(`http://127.0.0.1:${p + 1}`);
    const r0 = await raw(`http://127.0.0.1:${p}`, "GET", "/");
    assert.equal(r0.status, 201);
    assert.equal(r0.headers.get("x-test"), "yes");
    assert.equal(r0.text, `srv 0 port ${p} at 127.0.0.1:${p}`);
    const r1 = await raw(`http://127.0.0.1:${p + 1}`, "GET", "/");
    assert.equal(r1.text, `srv 1 port ${p + 1} at 127.0.0.1:${p + 1}`);
    assert.match(proc.stdout(), new RegExp(`Server address: 127\\.0\\.0\\.1:${p}\\n`));
  } finally {
    assert.equal(await proc.stop(), 0);
  }
  const q = freePort();
  const piped = spawn(["respond", "--listen", `127.0.0.1:${q}`], "from stdin");
  try {
    await waitFor(`http://127.0.0.1:${q}`);
    assert.equal((await raw(`http://127.0.0.1:${q}`, "GET", "/")).text, "from stdin");
  } finally {
    await piped.stop();
  }
});

Deno.test("cli file-server: compression on by default, browse, precompressed, access log; export-template", async () => {
  const root = await Deno.makeTempDir();
  await Deno.writeTextFile(`${root}/page.html`, "<p>" + "text ".repeat(400) + "</p>");
  await Deno.mkdir(`${root}/dir`);
  await Deno.writeTextFile(`${root}/dir/x.txt`, "x");
  await Deno.writeTextFile(`${root}/app.js`, "js".repeat(400));
  await Deno.writeFile(`${root}/app.js.gz`, zlib.gzipSync(new TextEncoder().encode("pre")));
  const port = freePort();
  const proc = spawn([
    "file-server",
    "--root",
    root,
    "--listen",
    `127.0.0.1:${port}`,
    "--browse",
    "--access-log",
    "-p",
    "gzip",
  ]);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(base);
    let r = await raw(base, "GET", "/page.html", { "accept-encoding": "zstd, gzip" });
    assert.equal(r.headers.get("content-encoding"), "zstd");
    r = await raw(base, "GET", "/dir/", { accept: "application/json" });
    assert.deepEqual(JSON.parse(r.text).map((i: { name: string }) => i.name), ["x.txt"]);
    r = await raw(base, "GET", "/app.js", { "accept-encoding": "gzip" });
    assert.equal(new TextDecoder().decode(zlib.gunzipSync(r.body)), "pre");
    const admin = await raw(base, "GET", "/");
    assert.equal(admin.status, 200, "browse lists the root");
  } finally {
    await proc.stop();
  }
  const port2 = freePort();
  const plain = spawn([
    "file-server",
    "--root",
    root,
    "--listen",
    `127.0.0.1:${port2}`,
    "--no-compress",
  ]);
  try {
    await waitFor(`http://127.0.0.1:${port2}`);
    const r = await raw(`http://127.0.0.1:${port2}`, "GET", "/page.html", {
      "accept-encoding": "gzip",
    });
    assert.equal(r.headers.get("content-encoding"), null);
    assert.equal(
      (await raw(`http://127.0.0.1:${port2}`, "GET", "/dir/")).status,
      404,
      "no browse without --browse",
    );
  } finally {
    await plain.stop();
    await Deno.remove(root, { recursive: true });
  }
  const tpl = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "file-server", "export-template"],
  }).output();
  assert.equal(tpl.code, 0);
  assert.match(new TextDecoder().decode(tpl.stdout), /\{\{rows\}\}/);
});

Deno.test("cli file-server: dotfiles (.git/, .env) are not served or listed; .well-known is", async () => {
  const root = await Deno.makeTempDir();
  await Deno.mkdir(`${root}/.git`);
  await Deno.mkdir(`${root}/.well-known`);
  await Deno.writeTextFile(`${root}/.git/config`, "[core]");
  await Deno.writeTextFile(`${root}/.env`, "SECRET=1");
  await Deno.writeTextFile(`${root}/.well-known/security.txt`, "Contact: x");
  await Deno.writeTextFile(`${root}/index.txt`, "home");
  const port = freePort();
  const proc = spawn(["file-server", "--root", root, "--listen", `127.0.0.1:${port}`, "--browse"]);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(base);
    for (const path of ["/.env", "/.git/config", "/%2Egit/config", "/x/../.env"]) {
      const r = await raw(base, "GET", path);
      assert.equal(r.status, 404, path);
      assert.doesNotMatch(r.text, /SECRET|core/);
    }
    assert.equal((await raw(base, "GET", "/.well-known/security.txt")).text, "Contact: x");
    const list = await raw(base, "GET", "/.well-known/", { accept: "application/json" });
    assert.deepEqual(JSON.parse(list.text).map((i: { name: string }) => i.name), ["security.txt"]);
  } finally {
    await proc.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("cli reverse-proxy: several upstreams from a range, header up/down, change-host-header", async () => {
  const backends = [0, 1].map((i) =>
    Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (req) =>
        new Response(
          JSON.stringify({ i, host: req.headers.get("host"), up: req.headers.get("x-up") }),
        ),
    )
  );
  const from = freePort();
  const args = [
    "reverse-proxy",
    "--from",
    `:${from}`,
    "-H",
    "X-Up: 1",
    "-d",
    "X-Down: 2",
    "--change-host-header",
  ];
  for (const b of backends) args.push("--to", `127.0.0.1:${(b.addr as Deno.NetAddr).port}`);
  const proc = spawn(args);
  const base = `http://127.0.0.1:${from}`;
  try {
    await waitFor(base);
    const seen = new Set<number>();
    for (let i = 0; i < 12; i++) {
      const r = await raw(base, "GET", "/");
      assert.equal(r.headers.get("x-down"), "2");
      const body = JSON.parse(r.text);
      assert.equal(body.up, "1");
      assert.equal(body.host, `127.0.0.1:${(backends[body.i].addr as Deno.NetAddr).port}`);
      seen.add(body.i);
    }
    assert.equal(seen.size, 2, "both upstreams used");
  } finally {
    await proc.stop();
    for (const b of backends) await b.shutdown();
  }
});

Deno.test("cli hash-password: bcrypt, verifies; unknown algorithm fails", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "hash-password", "--plaintext", "pw"],
  }).output();
  assert.equal(out.code, 0);
  const hash = new TextDecoder().decode(out.stdout).trim();
  assert.match(hash, /^\$2[aby]\$14\$/);
  assert.ok(bcrypt.compareSync("pw", hash));
  const bad = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "hash-password", "-p", "x", "-a", "md5"],
  }).output();
  assert.equal(bad.code, 1);
});

/**
 * Logging fields that were accepted without effect, now honoured or refused: the file writer's
 * `mode`, `dir_mode`, `roll_compression` and time-based rolls (`roll_interval`, `roll_at`,
 * `roll_minutes`); the encoders' `line_ending` and `time_local`; the strict log, sampling and
 * writer objects; `sink`, `caller_key`, `stacktrace_key` and other `duration_format`s refused.
 */
import assert from "node:assert/strict";
import zlib from "node:zlib";
import { startServer } from "../../../lib/server/embed.ts";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { nextTimedRoll } from "../../../lib/server/logging/file_writer.ts";
import { freePort } from "../fixtures/helpers.ts";

function config(port: number, log: Record<string, unknown>) {
  return {
    admin: { disabled: true },
    logging: { logs: { default: { writer: { output: "discard" } }, access: log } },
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            logs: {},
            routes: [{ handle: [{ handler: "static_response", body: "ok" }] }],
          },
        },
      },
    },
  };
}

async function hit(port: number, n = 1): Promise<void> {
  for (let i = 0; i < n; i++) await (await fetch(`http://127.0.0.1:${port}/${i}`)).text();
}

Deno.test("logging: file writer mode, dir_mode, roll_interval and zstd roll_compression", async () => {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-logfields-" });
  const port = freePort();
  const old = Deno.umask(0o022);
  try {
    const file = `${root}/made/here/access.log`;
    const srv = await startServer({
      config: config(port, {
        include: ["http.log.access"],
        writer: {
          output: "file",
          filename: file,
          mode: "0640",
          dir_mode: "from_file",
          roll_interval: "300ms",
          roll_compression: "zstd",
        },
      }),
    });
    try {
      await hit(port);
      assert.equal((await Deno.stat(file)).mode! & 0o777, 0o640);
      // from_file: the file's mode with execute bits where it can be read
      assert.equal((await Deno.stat(`${root}/made/here`)).mode! & 0o777, 0o750);
      assert.equal((await Deno.stat(`${root}/made`)).mode! & 0o777, 0o750);
      await new Promise((r) => setTimeout(r, 500));
      await hit(port); // the first write after the interval rolls the file
      let backup = "";
      const until = Date.now() + 5000;
      // done once the rolled file is compressed and the uncompressed one removed
      let plain = true;
      while ((!backup || plain) && Date.now() < until) {
        backup = "";
        plain = false;
        for await (const e of Deno.readDir(`${root}/made/here`)) {
          if (e.name.endsWith(".log.zst")) backup = e.name;
          else if (e.name !== "access.log") plain = true;
        }
        if (!backup || plain) await new Promise((r) => setTimeout(r, 50));
      }
      assert.match(backup, /^access-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log\.zst$/);
      const rolled = zlib.zstdDecompressSync(await Deno.readFile(`${root}/made/here/${backup}`));
      assert.match(new TextDecoder().decode(rolled), /"uri":"\/0"/, "the first request's record");
      assert.match(await Deno.readTextFile(file), /"uri":"\/0"/, "the new file has the second");
    } finally {
      await srv.stop();
    }
  } finally {
    Deno.umask(old);
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("logging: the next time-based roll from roll_interval, roll_at and roll_minutes", () => {
  const t = Date.UTC(2026, 0, 5, 10, 20, 30); // 10:20:30 UTC
  assert.equal(nextTimedRoll(t, { local: false }), Infinity);
  assert.equal(nextTimedRoll(t, { intervalMs: 60_000, local: false }), t + 60_000);
  assert.equal(
    nextTimedRoll(t, { at: [[6, 0], [12, 0]], local: false }),
    Date.UTC(2026, 0, 5, 12, 0),
  );
  assert.equal(nextTimedRoll(t, { at: [[6, 0]], local: false }), Date.UTC(2026, 0, 6, 6, 0));
  assert.equal(
    nextTimedRoll(t, { minutes: [10, 40], local: false }),
    Date.UTC(2026, 0, 5, 10, 40),
  );
  assert.equal(nextTimedRoll(t, { minutes: [10], local: false }), Date.UTC(2026, 0, 5, 11, 10));
  assert.equal(
    nextTimedRoll(t, { minutes: [10], at: [[10, 30]], intervalMs: 3_600_000, local: false }),
    Date.UTC(2026, 0, 5, 10, 30),
    "the earliest wins",
  );
});

Deno.test("logging: line_ending and time_local of the encoders", async () => {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-logenc-" });
  const port = freePort();
  try {
    const file = `${root}/a.log`;
    const srv = await startServer({
      config: config(port, {
        include: ["http.log.access"],
        writer: { output: "file", filename: file },
        encoder: { format: "console", line_ending: "\r\n", time_format: "wall", time_local: false },
      }),
    });
    try {
      await hit(port, 2);
    } finally {
      await srv.stop();
    }
    const text = await Deno.readTextFile(file);
    const lines = text.split("\r\n");
    assert.equal(lines.length, 3, "two records, each ended by CRLF");
    const now = new Date();
    const utcDay = `${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, "0")}/`;
    assert.ok(lines[0].startsWith(utcDay), lines[0]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("logging: the json encoder's keys and level_format", async () => {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-logkeys-" });
  const port = freePort();
  try {
    const file = `${root}/k.log`;
    const srv = await startServer({
      config: config(port, {
        include: ["http.log.access"],
        writer: { output: "file", filename: file },
        encoder: {
          format: "json",
          message_key: "message",
          level_key: "severity",
          time_key: "at",
          name_key: "component",
          level_format: "upper",
        },
      }),
    });
    try {
      await hit(port);
    } finally {
      await srv.stop();
    }
    const rec = JSON.parse((await Deno.readTextFile(file)).trim());
    assert.equal(rec.message, "handled request");
    assert.equal(rec.severity, "INFO");
    assert.equal(typeof rec.at, "number");
    assert.equal(rec.component, "http.log.access");
    for (const k of ["msg", "level", "ts", "logger"]) assert.equal(rec[k], undefined, k);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("logging: fields that cannot be honoured are refused; unknown ones too", async () => {
  const cfg = (log: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    admin: { disabled: true },
    logging: { logs: { x: { writer: { output: "discard" }, ...log } }, ...extra },
  });
  for (
    const [log, extra, re] of [
      [
        { encoder: { format: "json", caller_key: "caller" } },
        {},
        /caller_key: log records here carry no caller/,
      ],
      [
        { encoder: { format: "json", stacktrace_key: "st" } },
        {},
        /stacktrace_key: log records here carry no stack trace/,
      ],
      [
        { encoder: { format: "json", duration_format: "nano" } },
        {},
        /duration_format: "nano" is not available/,
      ],
      [{ encoder: { format: "json", colour: true } }, {}, /encoders\.json: unknown field "colour"/],
      [{ writer: { output: "stderr", path: "x" } }, {}, /writers\.stderr: unknown field "path"/],
      [
        { writer: { output: "file", filename: "/tmp/x.log", roll_at: ["25:00"] } },
        {},
        /roll_at "25:00" is not a time of day/,
      ],
      [
        { writer: { output: "file", filename: "/tmp/x.log", roll_compression: "lz4" } },
        {},
        /roll_compression "lz4"/,
      ],
      [
        { writer: { output: "file", filename: "/tmp/x.log", compress: true } },
        {},
        /writers\.file: unknown field "compress"/,
      ],
      [{ sampling: { interval: "1s", burst: 3 } }, {}, /sampling: unknown field "burst"/],
      [{ levels: "INFO" }, {}, /logging\.logs\.x: unknown field "levels"/],
      [
        {},
        { sink: { writer: { output: "stderr" } } },
        /logging\.sink: there is no standard-library logger/,
      ],
    ] as [Record<string, unknown>, Record<string, unknown>, RegExp][]
  ) {
    await assert.rejects(validateConfig(cfg(log, extra)), re);
  }
  await validateConfig(
    cfg({ encoder: { format: "json", duration_format: "seconds", caller_key: "" } }),
  );
});

Deno.test("logging: net writer soft_start and dial_timeout; file roll_disabled and roll_local_time", async () => {
  const { netWriter } = await import("../../../lib/server/logging/writers.ts");
  const { fileWriter } = await import("../../../lib/server/logging/file_writer.ts");
  // nothing listens: without soft_start the dial fails the config, with it writes wait
  const free = freePort();
  await assert.rejects(
    netWriter({ address: `127.0.0.1:${free}`, dial_timeout: "500ms" }),
    /net log writer: dialing/,
  );
  const w = await netWriter({
    address: `127.0.0.1:${free}`,
    soft_start: true,
    dial_timeout: "200ms",
  });
  w.write(new TextEncoder().encode("queued\n"));
  await w.cleanup?.();

  const dir = await Deno.makeTempDir({ prefix: "gatehouse-roll-" });
  try {
    const big = new TextEncoder().encode("x".repeat(700_000) + "\n");
    const off = fileWriter({ filename: `${dir}/off.log`, roll_size_mb: 1, roll_disabled: true });
    off.write(big);
    off.write(big);
    await off.cleanup?.();
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["off.log"], "never rolled");

    // roll_local_time names backups in local time: run with a time zone far from UTC
    const script = `
      import { fileWriter } from ${
      JSON.stringify(new URL("../../../lib/server/logging/file_writer.ts", import.meta.url).href)
    };
      const w = fileWriter({ filename: Deno.args[0], roll_size_mb: 1, roll_gzip: false, roll_local_time: Deno.args[1] === "local" });
      const big = new TextEncoder().encode("x".repeat(700_000) + "\\n");
      w.write(big); w.write(big); await w.cleanup();`;
    const names: Record<string, string> = {};
    for (const kind of ["local", "utc"]) {
      await Deno.mkdir(`${dir}/${kind}`);
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["eval", "--ext=ts", script, `${dir}/${kind}/a.log`, kind],
        env: { TZ: "Pacific/Kiritimati" }, // UTC+14
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      names[kind] = [...Deno.readDirSync(`${dir}/${kind}`)].map((e) => e.name).find((n) =>
        n !== "a.log"
      )!;
    }
    const hour = (n: string) => Number(/T(\d\d)-/.exec(n)![1]);
    assert.equal(
      (hour(names.local) - hour(names.utc) + 24) % 24,
      14,
      `${names.local} vs ${names.utc}`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

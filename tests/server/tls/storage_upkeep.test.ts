/**
 * Storage upkeep of the `tls` app: expired certificates cleaned at start (14 days after they
 * expired), not more often than `storage_clean_interval` across instances sharing the
 * storage (`last_clean.json`), not at all with `disable_storage_clean`; the storage check
 * before obtaining, which `disable_storage_check` turns off.
 */
import assert from "node:assert/strict";
import { freePort, sites, tlsServer } from "./_helpers.ts";
import { fileLogging, logEntries, waitFor } from "../acme/_server.ts";
import { generateKey, x509 as loadX509 } from "../../../lib/server/pki/x509.ts";

const DAY = 86_400_000;

/** Writes a self-signed certificate for `name` under Caddy's layout, ending `endsIn` from now. */
async function plant(storage: string, name: string, endsIn: number): Promise<string> {
  const x = await loadX509();
  const key = await generateKey();
  const cert = await x.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: `CN=${name}`,
    notBefore: new Date(Date.now() - 90 * DAY),
    notAfter: new Date(Date.now() + endsIn),
    keys: key.keys,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
  });
  const dir = `${storage}/certificates/local/${name}`;
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/${name}.crt`, cert.toString("pem"));
  await Deno.writeTextFile(`${dir}/${name}.key`, key.pem);
  await Deno.writeTextFile(`${dir}/${name}.json`, "{}");
  return dir;
}

const exists = (p: string) => Deno.stat(p).then(() => true, () => false);

Deno.test("storage clean: expired certificates go after 14 days, once per interval across instances, never when disabled", async () => {
  const storage = await Deno.makeTempDir({ prefix: "gatehouse-clean-" });
  const dir = await Deno.makeTempDir();
  const port = freePort();
  const app = { http_port: freePort(), https_port: port };
  const tls = (extra: Record<string, unknown> = {}) => ({
    ...sites(port, ["a.localhost"], {}, app),
    tls: { automation: { storage_clean_interval: "1h" }, ...extra },
  });
  try {
    const old = await plant(storage, "old.localhost", -15 * DAY);
    const recent = await plant(storage, "recent.localhost", -1 * DAY);
    const valid = await plant(storage, "valid.localhost", 30 * DAY);
    const log = `${dir}/one.log`;
    let srv = await tlsServer({ logging: fileLogging(log), apps: tls() }, storage);
    try {
      await waitFor(
        async () =>
          (await logEntries(log)).some((e) => e.msg === "finished cleaning storage units"),
        10_000,
        "the first cleaning",
      );
      assert.equal(await exists(old), false, "expired 15 days ago: deleted");
      assert.equal(await exists(recent), true, "expired yesterday: kept (grace period)");
      assert.equal(await exists(`${valid}/valid.localhost.key`), true);
      const stamp = JSON.parse(await Deno.readTextFile(`${storage}/last_clean.json`));
      assert.ok(Date.now() - Date.parse(stamp.tls.timestamp) < 60_000);
      assert.equal(typeof stamp.tls.instance_id, "string");
    } finally {
      await srv.stop();
    }
    // Another instance within the interval: skips (the planted certificate stays).
    const again = await plant(storage, "again.localhost", -30 * DAY);
    const log2 = `${dir}/two.log`;
    srv = await tlsServer({ logging: fileLogging(log2), apps: tls() }, storage);
    try {
      await waitFor(
        async () =>
          (await logEntries(log2)).some((e) =>
            e.msg === "storage cleaning happened too recently; skipping for now"
          ),
        10_000,
        "the skipped cleaning",
      );
      assert.equal(await exists(again), true);
    } finally {
      await srv.stop();
    }
    // disable_storage_clean, with the stamp gone: still nothing is cleaned.
    await Deno.remove(`${storage}/last_clean.json`);
    const log3 = `${dir}/three.log`;
    srv = await tlsServer({
      logging: fileLogging(log3),
      apps: tls({ disable_storage_clean: true }),
    }, storage);
    try {
      await waitFor(
        async () => await exists(`${storage}/certificates/local/a.localhost`),
        10_000,
        "a.localhost",
      );
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await exists(again), true);
      assert.equal(await exists(`${storage}/last_clean.json`), false);
      assert.ok(!(await logEntries(log3)).some((e) => e.msg === "cleaning storage unit"));
    } finally {
      await srv.stop();
    }
  } finally {
    await Deno.remove(storage, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("storage check: a storage that cannot keep writes fails before issuing; disable_storage_check skips the check", async () => {
  const dir = await Deno.makeTempDir();
  const port = freePort();
  const notADir = `${dir}/plain-file`;
  await Deno.writeTextFile(notADir, "not a directory");
  const config = (disable: boolean, log: string) => ({
    logging: fileLogging(log),
    apps: {
      ...sites(port, ["a.localhost"], {}, { http_port: freePort(), https_port: port }),
      tls: {
        disable_storage_check: disable,
        automation: {
          policies: [{
            subjects: ["a.localhost"],
            issuers: [{ module: "internal" }],
            storage: { module: "file_system", root: notADir },
          }],
        },
      },
    },
  });
  try {
    for (const disable of [false, true]) {
      const log = `${dir}/${disable}.log`;
      const srv = await tlsServer(config(disable, log));
      try {
        const failure = await waitFor(
          async () =>
            (await logEntries(log)).find((e) =>
              e.msg === "could not get certificate" && e.identifier === "a.localhost"
            ),
          10_000,
          "the failed obtain",
        );
        if (disable) assert.doesNotMatch(String(failure.error), /failed storage check/);
        else {assert.match(
            String(failure.error),
            /failed storage check: .*storage is probably misconfigured/,
          );}
      } finally {
        await srv.stop();
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Feeds the JSON half of every test of the shared Caddyfile corpus (`../shared/caddyfile-corpus`,
 * read in place, never copied) to `validate` and counts the configs that load. Every failure
 * is printed with its reason and, where the missing piece belongs to another part of the
 * work (automatic certificates, TLS client authentication, `acme_server`, the `fastcgi`
 * transport, dynamic upstreams), that part is named. The count must not fall below FLOOR.
 */
import assert from "node:assert/strict";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { CLI, freePort, ROOT } from "../fixtures/helpers.ts";
import { makePki } from "../http/pki.ts";

/** Configs that must load; raised as modules land (goal: 170 of the 179 here). */
// 96 before public names without an ACME issuer were refused at load (pki); the ACME issuer
// brought them back (109); DNS-01, key types, certificate managers, storage upkeep (130);
// TLS client authentication, acme_server, fastcgi, dynamic upstreams (156); the files Caddy's
// test directory has, made here (167); the zerossl issuer (168). With every server and
// transport field honoured or refused, the configs left fail by design: REFUSED or
// EXPECTED_FAILURES below (168 measured after the merge of both). The upstream client's
// last fields (expect_continue_timeout, write_buffer_size, renegotiation through OpenSSL, the
// connection fields on HTTP/2) brought reverse_proxy_options in (169); HTTP/2 server push on
// the node engine, push (170). HTTP/3: the QUIC listener and fdgram/ sockets (172).
const FLOOR = 172;

/**
 * Configs Caddy refuses too (`caddy validate` fails on them the same way): files they name do
 * not exist here, or they need a DNS provider they never name. Each must keep failing so.
 */
const EXPECTED_FAILURES: Record<string, RegExp> = {
  global_options_acme: /trusted_roots_pem_files: cannot read \/path\/to\/ca\.crt/,
  global_options_skip_install_trust: /reading \/path\/to\/cert\.pem/,
  tls_internal_options: /no certificate authority configured with id: foo/,
  // the leaf lifetime equals the intermediate's (7 days): Caddy's acme_server refuses it too
  acme_server_lifetime:
    /certificate lifetime \(\S+\) should be less than intermediate certificate lifetime/,
  // `dummy` is a verifier of Caddy's test build only; a Caddy binary refuses it too
  "tls_client_auth_cert_file-legacy-with-verifier": /verifier "dummy"/,
  tls_explicit_issuer_dns_ttl: /DNS challenge enabled, but no DNS provider configured/,
  tls_explicit_issuer_propagation_options: /DNS challenge enabled, but no DNS provider configured/,
};

/** Configs once refused by design that load now (each named, so the count cannot hide a swap). */
const NOW_LOADING = [
  "push",
  "reverse_proxy_options",
  "global_server_options_single",
  "bind_fd_fdgram_h123",
];

/**
 * The environment some configs expect (socket activation passes descriptor numbers in
 * variables their `{env.*}` placeholders read); validating binds nothing, so any number does.
 */
const CONFIG_ENV: Record<string, string> = {
  CADDY_HTTP_FD: "3",
  CADDY_HTTPS_FD: "4",
  CADDY_HTTP3_FD: "5",
};

const CORPUS = `${ROOT}../shared/caddyfile-corpus/corpus`;

function corpusPresent(): boolean {
  try {
    return Deno.statSync(CORPUS).isDirectory;
  } catch {
    return false;
  }
}

/** The corpus tests whose expectation is a JSON config (the rest expect an adapt error). */
function corpusConfigs(): { name: string; json: string }[] {
  const out: { name: string; json: string }[] = [];
  const names = [...Deno.readDirSync(CORPUS)].map((e) => e.name).filter((n) =>
    /\.(caddyfiletest|txt)$/.test(n)
  ).sort();
  for (const name of names) {
    const parts = Deno.readTextFileSync(`${CORPUS}/${name}`).split("----------");
    if (parts.length < 2) continue;
    const json = parts[1].trim();
    if (json.startsWith("{")) out.push({ name: name.replace(/\.[a-z]+$/, ""), json });
  }
  return out;
}

/**
 * Files some corpus configs name relative to Caddy's test directory (`caddytest/integration`,
 * where Caddy's own suite runs them). They are made here from a test CA of our own, and those
 * configs are validated from a directory laid out the same way, so that they are checked for
 * what they configure rather than for a file this checkout does not have.
 */
const FIXTURE_FILES = ["../caddy.ca.cer", "test.crt", "test.key", "cert.pem", "key.pem"];

/** Makes the fixture files; returns the directory to validate from. */
async function fixtureWorkDir(): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-corpus-" });
  const work = `${root}/integration`;
  await Deno.mkdir(work);
  const pki = await makePki({ site: { dns: ["localhost", "example.com", "*.example.com"] } });
  const { cert, key } = pki.leafs.site;
  await Deno.writeTextFile(`${root}/caddy.ca.cer`, pki.caPem);
  for (const [name, text] of [["test.crt", cert], ["test.key", key], ["cert.pem", cert]]) {
    await Deno.writeTextFile(`${work}/${name}`, text);
  }
  await Deno.writeTextFile(`${work}/key.pem`, key);
  return work;
}

/** Validates a config through the command line from `cwd`; resolves to the error, or null. */
async function validateFrom(cwd: string, json: string): Promise<string | null> {
  const file = `${cwd}/config.json`;
  await Deno.writeTextFile(file, json);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "validate", "--config", file],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.success) return null;
  const lines = new TextDecoder().decode(out.stderr).trim().split("\n");
  return (lines.findLast((l) => l.startsWith("gatehouse validate: ")) ?? lines.at(-1) ?? "")
    .replace(/^gatehouse validate: /, "");
}

/** Why a config does not load, by reason: printed beside each failure. */
const KINDS: [RegExp, string][] = [
  [/not available here|not available|cannot run|not supported/, "not available here"],
  [/unknown field/, "field not built"],
];

/** Failures that are refusals by design: what cannot run here, named at load. */
const REFUSED: [RegExp, string][] = [];

function kind(name: string, reason: string): string {
  if (EXPECTED_FAILURES[name]?.test(reason)) return "expected: Caddy fails too";
  for (const [re, why] of REFUSED) if (re.test(reason)) return why;
  for (const [re, k] of KINDS) if (re.test(reason)) return k;
  return "other";
}

Deno.test({
  name: "corpus: the JSON of the Caddyfile corpus validates",
  ignore: !corpusPresent(),
  async fn() {
    const configs = corpusConfigs();
    const failures: { name: string; reason: string }[] = [];
    const saved = Object.keys(CONFIG_ENV).map((k) => [k, Deno.env.get(k)] as const);
    for (const [k, v] of Object.entries(CONFIG_ENV)) Deno.env.set(k, v);
    const work = await fixtureWorkDir();
    for (const { name, json } of configs) {
      if (FIXTURE_FILES.some((f) => json.includes(`"${f}"`))) {
        const reason = await validateFrom(work, json);
        if (reason !== null) failures.push({ name, reason });
        continue;
      }
      try {
        await validateConfig(JSON.parse(json));
      } catch (e) {
        failures.push({ name, reason: (e as Error).message.split("\n")[0] });
      }
    }
    for (const [k, v] of saved) v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
    await Deno.remove(work.replace(/\/integration$/, ""), { recursive: true });
    const loaded = configs.length - failures.length;
    const lines = failures.map((f) => `  ${f.name} [${kind(f.name, f.reason)}]: ${f.reason}`);
    console.log(`corpus validate: ${loaded} of ${configs.length} load\n${lines.join("\n")}`);
    for (const [name, re] of Object.entries(EXPECTED_FAILURES)) {
      if (!configs.some((c) => c.name === name)) continue;
      const f = failures.find((x) => x.name === name);
      assert.ok(f, `${name} loads, but Caddy refuses it`);
      assert.match(f.reason, re, name);
    }
    for (const name of NOW_LOADING) {
      if (!configs.some((c) => c.name === name)) continue;
      const f = failures.find((x) => x.name === name);
      assert.equal(f, undefined, `${name} no longer loads: ${f?.reason}`);
    }
    assert.ok(
      loaded >= FLOOR,
      `only ${loaded} of ${configs.length} corpus configs validate (floor ${FLOOR})`,
    );
  },
});

Deno.test("validate: binds no listen address, creates no log file, starts nothing", async () => {
  // The port is held here the whole time: a validate that bound it would fail.
  const held = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (held.addr as Deno.NetAddr).port;
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-validate-" });
  try {
    const file = `${dir}/config.json`;
    const logFile = `${dir}/logs/access.log`;
    const config = {
      admin: { disabled: true },
      logging: {
        logs: {
          default: { writer: { output: "file", filename: logFile } },
          net: { writer: { output: "net", address: `127.0.0.1:${freePort()}` } },
        },
      },
      apps: {
        http: {
          servers: {
            a: {
              listen: [`127.0.0.1:${port}`],
              routes: [{
                handle: [{
                  handler: "reverse_proxy",
                  upstreams: [{ dial: `127.0.0.1:${freePort()}` }],
                  health_checks: { active: { uri: "/health", interval: "10ms" } },
                }],
              }],
            },
            // an address of no interface here: binding it would fail
            b: { listen: ["192.0.2.1:8080"], routes: [] },
          },
        },
      },
    };
    await Deno.writeTextFile(file, JSON.stringify(config));
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "validate", "--config", file],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, text);
    assert.match(text, /Valid configuration/);
    await assert.rejects(Deno.stat(`${dir}/logs`), Deno.errors.NotFound, "no log dir made");

    // an address that cannot be a listener is still refused
    config.apps.http.servers.b.listen = ["127.0.0.1:70000"];
    await Deno.writeTextFile(file, JSON.stringify(config));
    const bad = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "validate", "--config", file],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(bad.code, 1);
    assert.match(new TextDecoder().decode(bad.stderr), /port/);
  } finally {
    held.close();
    await Deno.remove(dir, { recursive: true });
  }
});

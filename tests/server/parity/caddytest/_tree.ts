/**
 * The directory layout Caddy's integration tests run in, made at test time: `caddytest/`
 * holds the certificates (`caddy.localhost.crt` for `*.caddy.localhost`, `a.caddy.localhost.crt`
 * for `a.caddy.localhost`, both self-signed X.509 v1 with a 2048-bit RSA key, as Caddy's own;
 * `leafcert.pem`, a self-signed v3 certificate), `caddytest/integration/` is the server's working
 * directory (relative paths such as `../leafcert.pem` and `root testdata` resolve from there) and
 * `caddytest/integration/testdata/` the files the templates and file_server scenarios read.
 *
 * Caddy's harness rewrites every `/<name>.crt` and `/<name>.key` in a config to that file in
 * `caddytest/` (`prependCaddyFilePath`); {@linkcode certificatePaths} does the same.
 */

/** The tree: its `caddytest/` folder and the working directory below it. */
export interface Tree {
  /** `<root>/caddytest`: the certificates. */
  caddytest: string;
  /** `<root>/caddytest/integration`: the server's working directory. */
  integration: string;
  remove(): Promise<void>;
}

async function openssl(args: string[]): Promise<string> {
  const out = await new Deno.Command("openssl", { args, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`openssl ${args.join(" ")}: ${text}`);
  return text;
}

const SUBJECT = "/C=US/ST=NY/O=Local Developement/L=Local Developement/CN=%s" +
  "/OU=Local Developement/emailAddress=admin@caddy.local";

/** A self-signed v1 certificate (no extensions) for `cn`, as `<dir>/<name>.crt` and `.key`. */
async function v1(dir: string, name: string, cn: string): Promise<void> {
  const key = `${dir}/${name}.key`;
  const csr = `${dir}/${name}.csr`;
  await openssl([
    "req",
    "-new",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    key,
    "-subj",
    SUBJECT.replace("%s", cn),
    "-out",
    csr,
  ]);
  await openssl([
    "x509",
    "-req",
    "-in",
    csr,
    "-signkey",
    key,
    "-days",
    "30",
    "-out",
    `${dir}/${name}.crt`,
  ]);
  await Deno.remove(csr);
  const text = await openssl(["x509", "-in", `${dir}/${name}.crt`, "-noout", "-text"]);
  if (!text.includes("Version: 1 (0x0)")) throw new Error(`${name}.crt is not a v1 certificate`);
}

/** Makes the tree in a new temp directory. */
export async function makeTree(): Promise<Tree> {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-caddytest-" });
  const caddytest = `${root}/caddytest`;
  const integration = `${caddytest}/integration`;
  await Deno.mkdir(`${integration}/testdata`, { recursive: true });
  await Promise.all([
    v1(caddytest, "caddy.localhost", "*.caddy.localhost"),
    v1(caddytest, "a.caddy.localhost", "a.caddy.localhost"),
    openssl([
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      `${root}/leafcert.key`,
      "-subj",
      "/C=CN/ST=PN/L=CN/O=ON/OU=UN/CN=Herong Yang",
      "-days",
      "30",
      "-out",
      `${caddytest}/leafcert.pem`,
    ]),
  ]);
  const files: Record<string, string> = {
    "cookie.html": '<h2>Cookie.ClientName {{.Cookie "clientname"}}</h2>',
    "index.localhost.html": "",
    "foo.txt": "foo",
  };
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(`${integration}/testdata/${name}`, text);
  }
  return {
    caddytest,
    integration,
    remove: () => Deno.remove(root, { recursive: true }),
  };
}

/** Caddy's `prependCaddyFilePath`: `/<name>.crt` and `/<name>.key` become files in `dir`. */
export function certificatePaths(config: string, dir: string): string {
  return config.replace(/(\/[\w\d.]+\.key)/g, `${dir}$1`).replace(
    /(\/[\w\d.]+\.crt)/g,
    `${dir}$1`,
  );
}

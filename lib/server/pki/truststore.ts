/**
 * Installing and removing a CA root in the local trust stores (`gatehouse trust` /
 * `untrust`, and `install_trust: true`):
 *
 * - **system** (Debian/Ubuntu and derivatives): the PEM goes to
 *   `/usr/local/share/ca-certificates/gatehouse-<fingerprint>.crt`, then
 *   `update-ca-certificates` rebuilds `/etc/ssl/certs` (what curl, OpenSSL, Deno with
 *   `DENO_TLS_CA_STORE=system` and most tools read). Needs root.
 * - **nss** (Chromium and other NSS users): when `certutil` (libnss3-tools) is installed, the
 *   root is added to `~/.pki/nssdb` (created when missing) as a trusted CA for TLS servers.
 *
 * The file name and NSS nickname derive from the certificate's SHA-256 fingerprint, so a root
 * can be removed from its file alone. Errors say which store failed and what to do.
 *
 * @module
 */
import { pemDecode } from "./der.ts";

/** Where Debian keeps locally added CA certificates. */
export const SYSTEM_CA_DIR = "/usr/local/share/ca-certificates";

/** The bundle Debian builds from its CA directories (`update-ca-certificates`). */
export const SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

/** A trust store operation that could not be done. */
export class TrustStoreError extends Error {
  /** Stable code: `permission` (needs root), `unsupported` (no known store), `failed`. */
  readonly code: "permission" | "unsupported" | "failed";
  /** Creates the error. */
  constructor(code: "permission" | "unsupported" | "failed", message: string) {
    super(message);
    this.name = "TrustStoreError";
    this.code = code;
  }
}

/** The first certificate of a PEM text, re-encoded, with its fingerprint. */
async function rootOf(pem: string): Promise<{ pem: string; fingerprint: string }> {
  const block = pemDecode(pem).find((b) => b.label === "CERTIFICATE");
  if (!block) throw new TrustStoreError("failed", "no PEM CERTIFICATE block in the given root");
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", block.der as Uint8Array<ArrayBuffer>),
  );
  const fingerprint = Array.from(digest.subarray(0, 8), (b) => b.toString(16).padStart(2, "0"))
    .join("");
  const m = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(pem)!;
  return { pem: m[0] + "\n", fingerprint };
}

async function has(cmd: string): Promise<boolean> {
  for (const dir of (Deno.env.get("PATH") ?? "/usr/sbin:/usr/bin:/sbin:/bin").split(":")) {
    try {
      if ((await Deno.stat(`${dir}/${cmd}`)).isFile) return true;
    } catch { /* not here */ }
  }
  return false;
}

async function run(cmd: string, args: string[]): Promise<{ code: number; out: string }> {
  const o = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: o.code, out: (dec.decode(o.stdout) + dec.decode(o.stderr)).trim() };
}

function nssDir(): string | undefined {
  const home = Deno.env.get("HOME");
  return home ? `${home}/.pki/nssdb` : undefined;
}

function nickname(fingerprint: string): string {
  return `Gatehouse root ${fingerprint}`;
}

async function systemSupported(): Promise<boolean> {
  return await has("update-ca-certificates");
}

async function updateSystem(fresh = false): Promise<void> {
  // --fresh also drops the links of removed certificates from /etc/ssl/certs.
  const r = await run("update-ca-certificates", fresh ? ["--fresh"] : []);
  if (r.code !== 0) {
    throw new TrustStoreError("failed", `update-ca-certificates failed (exit ${r.code}): ${r.out}`);
  }
}

function permission(e: unknown, what: string): never {
  if (e instanceof Deno.errors.PermissionDenied || e instanceof Deno.errors.NotCapable) {
    throw new TrustStoreError(
      "permission",
      `${what}: permission denied; the system trust store needs root (run the command with sudo)`,
    );
  }
  throw new TrustStoreError("failed", `${what}: ${(e as Error).message}`);
}

/**
 * Installs the root certificate `pem` in every supported store; resolves to the stores done
 * (`system`, `nss`). Throws a TrustStoreError when no store could take it.
 *
 * @example
 * ```ts ignore
 * import { installRoot } from "./truststore.ts";
 * await installRoot(rootPem, "local"); // ["system", "nss"]
 * ```
 */
export async function installRoot(pem: string, _caId = "local"): Promise<string[]> {
  const root = await rootOf(pem);
  const done: string[] = [];
  const errors: TrustStoreError[] = [];
  if (await systemSupported()) {
    const file = `${SYSTEM_CA_DIR}/gatehouse-${root.fingerprint}.crt`;
    try {
      try {
        await Deno.mkdir(SYSTEM_CA_DIR, { recursive: true });
        await Deno.writeTextFile(file, root.pem, { mode: 0o644 });
      } catch (e) {
        permission(e, `writing ${file}`);
      }
      await updateSystem();
      done.push("system");
    } catch (e) {
      errors.push(e as TrustStoreError);
    }
  }
  const dir = nssDir();
  if (dir && await has("certutil")) {
    try {
      await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
      if (!(await Deno.stat(`${dir}/cert9.db`).catch(() => null))) {
        const init = await run("certutil", ["-d", `sql:${dir}`, "-N", "--empty-password"]);
        if (init.code !== 0) {
          throw new TrustStoreError("failed", `creating NSS database ${dir}: ${init.out}`);
        }
      }
      const tmp = await Deno.makeTempFile({ suffix: ".crt" });
      try {
        await Deno.writeTextFile(tmp, root.pem);
        const r = await run("certutil", [
          "-d",
          `sql:${dir}`,
          "-A",
          "-t",
          "C,,",
          "-n",
          nickname(root.fingerprint),
          "-i",
          tmp,
        ]);
        if (r.code !== 0) throw new TrustStoreError("failed", `certutil -A in ${dir}: ${r.out}`);
      } finally {
        await Deno.remove(tmp).catch(() => {});
      }
      done.push("nss");
    } catch (e) {
      errors.push(
        e instanceof TrustStoreError
          ? e
          : new TrustStoreError("failed", `NSS database ${dir}: ${(e as Error).message}`),
      );
    }
  }
  if (!done.length) {
    if (errors.length) throw errors[0];
    throw new TrustStoreError(
      "unsupported",
      "no supported trust store found (needs update-ca-certificates, or certutil for NSS)",
    );
  }
  return done;
}

/**
 * Whether the system trust store trusts the root certificate `pem` (what curl, OpenSSL and most
 * tools read): its body is in the system bundle. Undefined when this system has no store
 * `gatehouse trust` knows (no `update-ca-certificates`).
 *
 * @example
 * ```ts ignore
 * import { systemTrusts } from "./truststore.ts";
 * if (await systemTrusts(rootPem) === false) console.log("run `gatehouse trust`");
 * ```
 */
export async function systemTrusts(
  pem: string,
  bundle: string = SYSTEM_CA_BUNDLE,
): Promise<boolean | undefined> {
  if (!(await systemSupported())) return undefined;
  const root = await rootOf(pem);
  const body = root.pem.replace(/-----[A-Z ]+-----|\s/g, "");
  try {
    return (await Deno.readTextFile(bundle)).replace(/\s/g, "").includes(body);
  } catch {
    return false;
  }
}

/**
 * Removes the root certificate `pem` from the stores that have it; resolves to the stores
 * changed. Throws a TrustStoreError when a store that has it cannot be changed.
 */
export async function uninstallRoot(pem: string): Promise<string[]> {
  const root = await rootOf(pem);
  const done: string[] = [];
  const file = `${SYSTEM_CA_DIR}/gatehouse-${root.fingerprint}.crt`;
  if (await Deno.stat(file).catch(() => null)) {
    try {
      await Deno.remove(file);
    } catch (e) {
      permission(e, `removing ${file}`);
    }
    await updateSystem(true);
    done.push("system");
  }
  const dir = nssDir();
  if (dir && await has("certutil") && await Deno.stat(`${dir}/cert9.db`).catch(() => null)) {
    const nick = nickname(root.fingerprint);
    const there = await run("certutil", ["-d", `sql:${dir}`, "-L", "-n", nick]);
    if (there.code === 0) {
      const r = await run("certutil", ["-d", `sql:${dir}`, "-D", "-n", nick]);
      if (r.code !== 0) throw new TrustStoreError("failed", `certutil -D in ${dir}: ${r.out}`);
      done.push("nss");
    }
  }
  return done;
}

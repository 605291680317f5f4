/**
 * Gatehousefile syntax of TLS client authentication (`client_auth` inside `tls`), of the CA
 * pool sources (`trust_pool inline|file|pki_root|pki_intermediate|storage|http|system|
 * combined`), leaf-certificate loaders and the `leaf` verifier.
 *
 * @module
 */
import { didYouMean, type Dispenser } from "../caddyfile/dispenser.ts";
import { type SyntaxSet, unmarshalModule } from "../caddyfile/registry.ts";
import { parseDuration } from "../config/duration.ts";
import { derBase64, pemDecode } from "../pki/der.ts";

type Obj = Record<string, unknown>;

/**
 * Base64 DER of every certificate in the PEM file the dispenser stands on (read now, as Caddy
 * does when adapting). A block whose base64 does not decode is carried as empty DER, which
 * loading the config refuses as not a certificate.
 */
function pemFileToDER(d: Dispenser): string[] {
  const file = d.val();
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch (e) {
    throw d.err(`open ${file}: ${(e as Error).message}`);
  }
  const blocks = pemDecode(text);
  // a block of another type refuses the file, as in Caddy, even one with a label `pemDecode`
  // does not read (lower case, punctuation)
  const other = /-----BEGIN (?!CERTIFICATE-----)([^-]+)-----[\s\S]*?-----END \1-----/;
  if (blocks.length === 0 || blocks.some((b) => b.label !== "CERTIFICATE") || other.test(text)) {
    throw d.err(`no CERTIFICATE pem block found in ${file}`);
  }
  return blocks.map((b) => derBase64(b.der));
}

/** `client_auth { mode ...; trust_pool ...; trusted_leaf_cert ...; verifier ... }`. */
export function parseClientAuth(d: Dispenser): Obj {
  const ca: Obj = {};
  const list = (k: string) => (ca[k] ??= []) as string[];
  d.next(); // client_auth
  // (Caddy skips arguments on this line; here they are refused rather than ignored)
  if (d.nextArg()) throw d.argErr();
  for (const n = d.nesting(); d.nextBlock(n);) {
    const sub = d.val();
    switch (sub) {
      case "mode": {
        if (d.countRemainingArgs() > 1) throw d.argErr();
        const a = d.args(1);
        if (!a) throw d.argErr();
        ca.mode = a[0];
        break;
      }
      case "trusted_ca_cert":
      case "trusted_ca_cert_file":
        if (ca.ca !== undefined) {
          throw d.err(
            "cannot specify both 'trust_pool' and 'trusted_ca_cert' or 'trusted_ca_cert_file'",
          );
        }
        if (!d.nextArg()) throw d.argErr();
        if (sub === "trusted_ca_cert") list("trusted_ca_certs").push(d.val());
        else list("trusted_ca_certs").push(...pemFileToDER(d));
        break;
      case "trusted_leaf_cert":
        if (!d.nextArg()) throw d.argErr();
        list("trusted_leaf_certs").push(d.val());
        break;
      case "trusted_leaf_cert_file":
        if (!d.nextArg()) throw d.argErr();
        list("trusted_leaf_certs").push(...pemFileToDER(d));
        break;
      case "trust_pool": {
        if ((ca.trusted_ca_certs as string[] | undefined)?.length) {
          throw d.err(
            "cannot specify both 'trust_pool' and 'trusted_ca_cert' or 'trusted_ca_cert_file'",
          );
        }
        if (!d.nextArg()) throw d.argErr();
        const name = d.val();
        ca.ca = { ...(unmarshalModule(d, `tls.ca_pool.source.${name}`) as Obj), provider: name };
        break;
      }
      case "verifier": {
        if (!d.nextArg()) throw d.argErr();
        const name = d.val();
        const v = unmarshalModule(d, `tls.client_auth.verifier.${name}`) as Obj;
        ((ca.verifiers ??= []) as unknown[]).push({ ...v, verifier: name });
        break;
      }
      default:
        throw d.unknownSubdirective(
          [
            "mode",
            "trust_pool",
            "trusted_ca_cert",
            "trusted_ca_cert_file",
            "trusted_leaf_cert",
            "trusted_leaf_cert_file",
            "verifier",
          ],
          "unknown subdirective for client_auth: %s",
        );
    }
  }
  const certs = ca.trusted_ca_certs as string[] | undefined;
  if (certs?.length) {
    ca.ca = { trusted_ca_certs: [...certs], provider: "inline" };
    delete ca.trusted_ca_certs;
  }
  return ca;
}

function argsAndBlock(d: Dispenser, field: string, sub: string): string[] {
  d.next();
  const out = [...d.remainingArgs()];
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== sub) throw d.unknownSubdirective([sub], "unrecognized directive: %s");
    out.push(...d.remainingArgs());
  }
  if (out.length === 0) throw d.err(`no ${field} specified`);
  return out;
}

/** `tls` block of the `http` CA pool. */
function tlsClientConfig(d: Dispenser): Obj {
  const t: Obj = {};
  for (const n = d.nesting(); d.nextBlock(n);) {
    switch (d.val()) {
      case "ca": {
        if (!d.nextArg()) throw d.argErr();
        const name = d.val();
        t.ca = { ...(unmarshalModule(d, `tls.ca_pool.source.${name}`) as Obj), provider: name };
        break;
      }
      case "insecure_skip_verify":
        t.insecure_skip_verify = true;
        break;
      case "handshake_timeout":
        if (!d.nextArg()) throw d.argErr();
        try {
          t.handshake_timeout = parseDuration(d.val());
        } catch (e) {
          throw d.err(`bad timeout value '${d.val()}': ${(e as Error).message}`);
        }
        break;
      case "server_name":
      case "renegotiation": {
        const k = d.val();
        const a = d.args(1);
        if (!a) throw d.argErr();
        if (k === "renegotiation" && !["never", "once", "freely"].includes(a[0])) {
          throw d.err(
            `unrecognized renegotiation level: ${a[0]}${
              didYouMean(a[0], ["never", "once", "freely"])
            }`,
          );
        }
        t[k] = a[0];
        break;
      }
      default:
        throw d.unknownSubdirective(
          ["ca", "insecure_skip_verify", "handshake_timeout", "server_name", "renegotiation"],
          "unrecognized directive: %s",
        );
    }
  }
  return t;
}

const loader = (field: string) => (d: Dispenser) => {
  d.nextArg();
  const v = d.remainingArgs();
  return v.length ? { [field]: v } : {};
};

const pkiSource = (d: Dispenser) => ({ authority: argsAndBlock(d, "authorities", "authority") });

/**
 * The Gatehousefile syntax of the CA pool sources, the leaf certificate loaders and the client
 * certificate verifiers (read inside `tls { client_auth ... }`).
 */
export const syntax: SyntaxSet = {
  modules: {
    "tls.ca_pool.source.inline": (d) => {
      d.next();
      if (d.countRemainingArgs() > 0) throw d.argErr();
      const certs: string[] = [];
      for (const n = d.nesting(); d.nextBlock(n);) {
        if (d.val() !== "trust_der") {
          throw d.unknownSubdirective(["trust_der"], "unrecognized directive: %s");
        }
        certs.push(...d.remainingArgs());
      }
      if (certs.length === 0) throw d.err("no certificates specified");
      return { trusted_ca_certs: certs };
    },
    "tls.ca_pool.source.file": (d) => {
      d.next();
      const files = [...d.remainingArgs()];
      for (const n = d.nesting(); d.nextBlock(n);) {
        if (d.val() !== "pem_file") {
          throw d.unknownSubdirective(["pem_file"], "unrecognized directive: %s");
        }
        files.push(...d.remainingArgs());
      }
      if (files.length === 0) throw d.err("no certificates specified");
      return { pem_files: files };
    },
    "tls.ca_pool.source.pki_root": pkiSource,
    "tls.ca_pool.source.pki_intermediate": pkiSource,
    "tls.ca_pool.source.storage": (d) => {
      d.next();
      const out: Obj = {};
      const keys = [...d.remainingArgs()];
      for (const n = d.nesting(); d.nextBlock(n);) {
        if (d.val() === "storage") {
          if (out.storage) throw d.err("storage module already set");
          if (!d.nextArg()) throw d.argErr();
          const name = d.val();
          out.storage = { ...(unmarshalModule(d, `caddy.storage.${name}`) as Obj), module: name };
        } else if (d.val() === "keys") keys.push(...d.remainingArgs());
        else throw d.unknownSubdirective(["storage", "keys"], "unrecognized directive: %s");
      }
      if (keys.length) out.pem_keys = keys;
      return out;
    },
    "tls.ca_pool.source.http": (d) => {
      d.next();
      const out: Obj = {};
      const endpoints = [...d.remainingArgs()];
      for (const n = d.nesting(); d.nextBlock(n);) {
        if (d.val() === "endpoints") {
          if (d.countRemainingArgs() === 0) throw d.argErr();
          endpoints.push(...d.remainingArgs());
        } else if (d.val() === "tls") {
          if (out.tls) throw d.err("tls block already defined");
          out.tls = tlsClientConfig(d);
        } else throw d.unknownSubdirective(["endpoints", "tls"], "unrecognized directive: %s");
      }
      if (endpoints.length) out.endpoints = endpoints;
      return out;
    },
    "tls.ca_pool.source.system": (d) => {
      d.next();
      if (d.countRemainingArgs() > 0) throw d.argErr();
      if (d.nextBlock(0)) throw d.err("system trust pool does not support any configuration");
      return {};
    },
    "tls.ca_pool.source.combined": (d) => {
      d.next();
      if (d.countRemainingArgs() > 0) throw d.argErr();
      const sources: unknown[] = [];
      for (const n = d.nesting(); d.nextBlock(n);) {
        if (d.val() !== "source") {
          throw d.unknownSubdirective(["source"], "unrecognized directive: %s");
        }
        if (!d.nextArg()) throw d.argErr();
        const name = d.val();
        sources.push({
          ...(unmarshalModule(d, `tls.ca_pool.source.${name}`) as Obj),
          provider: name,
        });
      }
      if (sources.length === 0) throw d.err("no sources specified");
      return { sources };
    },
    "tls.leaf_cert_loader.file": loader("files"),
    "tls.leaf_cert_loader.folder": loader("folders"),
    "tls.leaf_cert_loader.pem": loader("certificates"),
    "tls.client_auth.verifier.leaf": (d) => {
      d.nextArg();
      const loaders: unknown[] = [];
      const one = () => {
        const name = d.val();
        const l = unmarshalModule(d, `tls.leaf_cert_loader.${name}`) as Obj;
        loaders.push({ ...l, loader: name });
      };
      if (d.countRemainingArgs() > 1) {
        d.nextArg();
        one();
      } else {
        for (const n = d.nesting(); d.nextBlock(n);) one();
      }
      return loaders.length ? { leaf_certs_loaders: loaders } : {};
    },
    // the no-op verifier of Caddy's test build: configs written for it adapt; running them is
    // refused (only the leaf verifier is available)
    "tls.client_auth.verifier.dummy": () => ({}),
  },
};

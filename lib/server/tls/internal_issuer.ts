/**
 * `tls.issuance.internal`: certificates signed by a CA of the `pki` app (Caddy's
 * `internalissuer.go`). Config: `ca` (default `local`), `lifetime` (default 12h; never past
 * the signer's own end), `sign_with_root` (sign with the root instead of the intermediate).
 * The chain stored and served is the leaf then the intermediate.
 *
 * @module
 */
import type { ModuleDefinition, ProvisionContext } from "../module/mod.ts";
import { durationMs } from "../config/duration.ts";
import { Decoder } from "../config/decode.ts";
import type { PkiApp } from "../pki/app.ts";
import type { CertificateAuthority } from "../pki/ca.ts";
import { LIFETIMES, makeLeaf } from "../pki/x509.ts";
import type { IssuedCertificate, Issuer, IssueRequest } from "./issuer.ts";

/** The fields of the config (the field audit lists them itself: `OWN_DECODERS`). */
const FIELDS = ["ca", "lifetime", "sign_with_root"];

/** The internal issuer. */
export class InternalIssuer implements Issuer {
  /** The CA's id: certificates live under `certificates/<id>/`. */
  readonly issuerKey: string;

  private constructor(
    readonly ca: CertificateAuthority,
    readonly lifetimeMs: number,
    readonly signWithRoot: boolean,
  ) {
    this.issuerKey = ca.id;
  }

  /** Decodes the config and finds the CA (provisioning `local` when needed). */
  static async create(
    config: Record<string, unknown>,
    ctx: ProvisionContext,
  ): Promise<InternalIssuer> {
    const d: Decoder = new Decoder(config, "internal issuer");
    for (const k of Object.keys(config)) {
      if (!FIELDS.includes(k)) d.fail(`unknown field "${k}"`, "unknown_field");
    }
    const caId = d.value("ca");
    if (caId !== undefined && (typeof caId !== "string" || caId === "")) {
      d.fail("ca must be a CA id");
    }
    const signWithRoot = d.value("sign_with_root");
    if (signWithRoot !== undefined && typeof signWithRoot !== "boolean") {
      d.fail("sign_with_root must be a boolean");
    }
    const lifetime = d.value("lifetime") === undefined
      ? LIFETIMES.leaf
      : durationMs(d.value("lifetime"), "internal issuer: lifetime");
    if (!(lifetime > 0)) d.fail("lifetime must be positive");
    const pki = await ctx.app<PkiApp>("pki");
    if (!pki) throw new Error("internal issuer: the pki app could not be provisioned");
    const ca = await pki.getCA((caId as string | undefined) ?? "local");
    return new InternalIssuer(ca, lifetime, signWithRoot === true);
  }

  /** Names any internal issuer can certify: everything that qualifies for a certificate. */
  accepts(): boolean {
    return true;
  }

  /** Nothing to release: the CA belongs to the `pki` app. */
  cleanup(): void {}

  /** Signs a leaf for the request's names and key. */
  async issue(req: IssueRequest): Promise<IssuedCertificate> {
    const signer = this.ca.signer(this.signWithRoot);
    const leaf = await makeLeaf(
      req.names,
      req.key.keys.publicKey,
      signer.pem,
      signer.key,
      this.lifetimeMs,
    );
    return { certificatePem: leaf.pem + (this.signWithRoot ? "" : signer.chain) };
  }
}

/**
 * Registry entry of `tls.issuance.internal`.
 *
 * @example
 * ```ts
 * import { internalIssuerModule } from "./internal_issuer.ts";
 * internalIssuerModule.id; // "tls.issuance.internal"
 * ```
 */
export const internalIssuerModule: ModuleDefinition<InternalIssuer> = {
  id: "tls.issuance.internal",
  create: (config, ctx) => InternalIssuer.create(config, ctx),
};

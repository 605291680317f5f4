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
import type { PkiApp } from "../pki/app.ts";
import type { CertificateAuthority } from "../pki/ca.ts";
import { LIFETIMES, makeLeaf } from "../pki/x509.ts";
import type { IssuedCertificate, Issuer, IssueRequest } from "./issuer.ts";

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
    for (const k of Object.keys(config)) {
      if (!["ca", "lifetime", "sign_with_root"].includes(k)) {
        throw new Error(`internal issuer: unknown field "${k}"`);
      }
    }
    if (config.ca !== undefined && (typeof config.ca !== "string" || config.ca === "")) {
      throw new Error("internal issuer: ca must be a CA id");
    }
    if (config.sign_with_root !== undefined && typeof config.sign_with_root !== "boolean") {
      throw new Error("internal issuer: sign_with_root must be a boolean");
    }
    const lifetime = config.lifetime === undefined
      ? LIFETIMES.leaf
      : durationMs(config.lifetime, "internal issuer: lifetime");
    if (!(lifetime > 0)) throw new Error("internal issuer: lifetime must be positive");
    const pki = await ctx.app<PkiApp>("pki");
    if (!pki) throw new Error("internal issuer: the pki app could not be provisioned");
    const ca = await pki.getCA((config.ca as string | undefined) ?? "local");
    return new InternalIssuer(ca, lifetime, config.sign_with_root === true);
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

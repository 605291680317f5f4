/**
 * ACME problem documents (RFC 8555 section 6.7): `application/problem+json` with a type
 * `urn:ietf:params:acme:error:<code>`, a detail in words and the HTTP status of the code.
 *
 * @module
 */

const STATUS: Record<string, number> = {
  malformed: 400,
  badNonce: 400,
  badCSR: 400,
  badSignatureAlgorithm: 400,
  badRevocationReason: 400,
  rejectedIdentifier: 400,
  unsupportedIdentifier: 400,
  invalidContact: 400,
  unauthorized: 403,
  accountDoesNotExist: 400,
  orderNotReady: 403,
  alreadyRevoked: 400,
  incorrectResponse: 403,
  connection: 400,
  dns: 400,
  tls: 400,
  serverInternal: 500,
  notFound: 404,
  unsupported: 501,
};

/** An ACME error the server answers with. */
export class ACMEProblem extends Error {
  /** The error code (`malformed`, `badNonce`...). */
  readonly type: string;
  /** The HTTP status. */
  readonly status: number;

  /** A problem of `type` with a detail in words. */
  constructor(type: string, detail: string) {
    super(detail);
    this.type = type;
    this.status = STATUS[type] ?? 400;
  }

  /** The problem document. */
  toJSON(): Record<string, unknown> {
    const type = this.type === "notFound" || this.type === "unsupported"
      ? "urn:ietf:params:acme:error:malformed"
      : `urn:ietf:params:acme:error:${this.type}`;
    return { type, detail: this.message, status: this.status };
  }
}

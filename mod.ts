/**
 * Gatehouse core sign-in toolkit: password hashing, purpose-bound signed tokens, session
 * cookies, e-mail allowlists, OAuth sign-in (Google, GitHub, Microsoft), the identity relay and
 * time-based one-time passwords (TOTP) for a second factor.
 * Pure Web Crypto, no dependencies: runs on Deno, Node 20+, Bun and Cloudflare Workers.
 *
 * @example
 * ```ts
 * import { hashPassword, verifyPassword } from "@gatehouse/gatehouse";
 * const stored = await hashPassword("hunter2!");
 * console.log(await verifyPassword("hunter2!", stored)); // true
 * ```
 *
 * @module
 */
export { AuthError, type AuthErrorCode } from "./lib/auth/_errors.ts";
export {
  DEFAULT_PASSWORD_ITERATIONS,
  hashPassword,
  MAX_ITERATIONS_PER_CALL,
  MAX_PASSWORD_ITERATIONS,
  needsRehash,
  type PasswordOptions,
  verifyPassword,
} from "./lib/auth/password.ts";
export {
  type Secrets,
  signToken,
  type SignTokenOptions,
  type TokenClaims,
  verifyToken,
  type VerifyTokenOptions,
} from "./lib/auth/token.ts";
export {
  RELAY_TTL_SECONDS,
  type RelayClaims,
  type RelayOptions,
  signRelay,
  verifyRelay,
} from "./lib/auth/relay.ts";
export {
  clearSessionCookie,
  createSessionCookie,
  type CreateSessionOptions,
  DEFAULT_SESSION_MAX_AGE,
  type GenerationLookup,
  readSession,
  type ReadSessionOptions,
  type Session,
  type SessionConfig,
} from "./lib/auth/session.ts";
export {
  DEFAULT_MAX_REVOKED,
  type MemoryRevocationStore,
  memoryRevocationStore,
  type MemoryRevocationStoreOptions,
  type RevocationStore,
  revokeSession,
  type RevokeSessionOptions,
} from "./lib/auth/revocation.ts";
export { canonicalEmail } from "./lib/auth/email.ts";
export {
  base32Decode,
  base32Encode,
  generateTotpSecret,
  hotp,
  totp,
  TOTP_SECRET_BYTES,
  type TotpAlgorithm,
  type TotpOptions,
  totpStep,
  totpUri,
  type TotpUriOptions,
  verifyTotp,
  type VerifyTotpOptions,
} from "./lib/auth/totp.ts";
export {
  type AccessMode,
  emailAllowed,
  type EmailAllowedInput,
  isOwner,
  parseAccessMode,
} from "./lib/auth/access.ts";
export {
  clearOAuthStateCookie,
  configuredProviders,
  handleOAuthCallback,
  OAUTH_PROVIDERS,
  OAUTH_STATE_TTL_SECONDS,
  type OAuthClient,
  type OAuthConfig,
  type OAuthEndpoints,
  type OAuthErrorCode,
  type OAuthOptions,
  type OAuthProvider,
  type OAuthResult,
  type OAuthUser,
  startOAuth,
} from "./lib/auth/oauth/core.ts";

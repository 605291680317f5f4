/**
 * Gatehouse database user flows: signup with a one-time code, login, password reset, password,
 * name and e-mail changes, account removal, OAuth linking and a second factor (TOTP with
 * backup codes and trusted devices) and passkeys (WebAuthn), over a Cloudflare D1 binding or
 * libSQL (`openLibsql`). Every flow takes the database plus a params object, resolves to
 * `{ok:true, ...}` or `{ok:false, error}` (see {@linkcode D1ErrorCode}) and never throws.
 * `schema.sql` (also `SCHEMA_SQL`, `applySchema`) creates the tables; `migrate` upgrades
 * databases created before 0.2.0.
 *
 * @example
 * ```ts
 * import { applySchema, openLibsql, signup, verifyOtp } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await applySchema(db);
 * const sent: string[] = [];
 * await signup(db, {
 *   email: "ada@example.com",
 *   password: "correct horse battery staple",
 *   secret: "TOKEN_SECRET value",
 *   sendEmail: (mail) => void sent.push(mail.text),
 * });
 * const code = sent[0].match(/\d{6}/)![0];
 * const result = await verifyOtp(db, { email: "ada@example.com", code, secret: "TOKEN_SECRET value" });
 * console.log(result); // { ok: true, userId: "..." }
 * db.close();
 * ```
 *
 * @module
 */
export type { Secrets } from "./lib/auth/token.ts";
export type { D1Database, D1PreparedStatement, D1Result, D1ResultMeta } from "./lib/d1/types.ts";
export { type LibsqlDatabase, type LibsqlOptions, openLibsql } from "./lib/d1/libsql.ts";
export {
  type CommonError,
  D1_ERROR_CODES,
  type D1ErrorCode,
  type FlowFailure,
  type FlowResult,
  type PasswordError,
} from "./lib/d1/errors.ts";
export type {
  DeliveryOptions,
  EmailMessage,
  EmailSender,
  RenderedEmail,
  Renderer,
  SendFailure,
} from "./lib/d1/email.ts";
export type { ClockOptions, HashingOptions } from "./lib/d1/input.ts";
export type { ReauthOptions, User } from "./lib/d1/users.ts";
export { DEFAULT_REAUTH_SECONDS } from "./lib/d1/users.ts";
export { applySchema, SCHEMA_SQL, splitStatements } from "./lib/d1/schema.ts";
export { migrate, V020_COLUMNS } from "./lib/d1/migrate.ts";
export {
  checkPassword,
  MAX_EMAIL_LENGTH,
  MAX_NAME_LENGTH,
  normalizeEmail,
  normalizeName,
  normalizePassword,
  PASSWORD_LENGTH,
} from "./lib/d1/policy.ts";
export { OTP_MAX_ATTEMPTS, OTP_RESEND_SECONDS, OTP_TTL_MINUTES } from "./lib/d1/otp.ts";
export {
  accountDeletedEmail,
  accountExistsEmail,
  DEFAULT_APP_NAME,
  emailChangedNoticeEmail,
  emailChangeEmail,
  escapeHtml,
  otpEmail,
  passwordResetEmail,
  verifyEmail,
} from "./lib/d1/templates.ts";
export {
  resendOtp,
  type ResendOtpParams,
  type ResendOtpResult,
  signup,
  type SignupError,
  type SignupParams,
  type SignupResult,
  verifyOtp,
  type VerifyOtpError,
  type VerifyOtpParams,
  type VerifyOtpResult,
} from "./lib/d1/signup.ts";
export { login, type LoginError, type LoginParams, type LoginResult } from "./lib/d1/login.ts";
export { THROTTLE } from "./lib/d1/throttle.ts";
export {
  checkPasswordThrottled,
  type CheckPasswordThrottledError,
  type CheckPasswordThrottledParams,
  type CheckPasswordThrottledResult,
} from "./lib/d1/password_check.ts";
export {
  checkResetToken,
  type CheckResetTokenParams,
  type CheckResetTokenResult,
  requestPasswordReset,
  type RequestPasswordResetParams,
  RESET_TTL_HOURS,
  resetPassword,
  type ResetPasswordError,
  type ResetPasswordParams,
  type ResetPasswordResult,
} from "./lib/d1/reset.ts";
export {
  changeName,
  type ChangeNameError,
  type ChangeNameParams,
  type ChangeNameResult,
  changePassword,
  type ChangePasswordError,
  type ChangePasswordParams,
  type ChangePasswordResult,
  changeUsername,
  getUser,
  type GetUserResult,
  removeUser,
  type RemoveUserError,
  type RemoveUserParams,
  type RemoveUserResult,
} from "./lib/d1/account.ts";
export {
  confirmEmailChange,
  type ConfirmEmailChangeError,
  type ConfirmEmailChangeParams,
  type ConfirmEmailChangeResult,
  EMAIL_CHANGE_TTL_HOURS,
  requestEmailChange,
  type RequestEmailChangeError,
  type RequestEmailChangeParams,
  type RequestEmailChangeResult,
} from "./lib/d1/email_change.ts";
export {
  findOrCreateOAuthUser,
  type OAuthUserError,
  type OAuthUserParams,
  type OAuthUserResult,
} from "./lib/d1/oauth.ts";
export {
  createUserSession,
  type CreateUserSessionParams,
  type CreateUserSessionResult,
  readUserSession,
  type ReadUserSessionParams,
  signOut,
  signOutEverywhere,
  type SignOutEverywhereParams,
  type SignOutEverywhereResult,
  type SignOutParams,
  type SignOutResult,
  type UserSession,
} from "./lib/d1/session.ts";
export { revocationStore, REVOKED_CLEANUP_BATCH } from "./lib/d1/session_revocation.ts";
export {
  BACKUP_CODE_COUNT,
  SECOND_FACTOR_TICKET_SECONDS,
  type SecondFactorNeeded,
  TRUSTED_DEVICE_DAYS,
  type TrustedDevice,
  verifySecondFactor,
  type VerifySecondFactorError,
  type VerifySecondFactorParams,
  type VerifySecondFactorResult,
} from "./lib/d1/second_factor.ts";
export {
  confirmTotpEnrolment,
  type ConfirmTotpEnrolmentParams,
  type ConfirmTotpEnrolmentResult,
  type FactorActor,
  getSecondFactors,
  type GetSecondFactorsResult,
  regenerateBackupCodes,
  type RegenerateBackupCodesParams,
  type RegenerateBackupCodesResult,
  removeTotp,
  type RemoveTotpParams,
  type RemoveTotpResult,
  resetSecondFactor,
  type ResetSecondFactorResult,
  type SecondFactors,
  startTotpEnrolment,
  type StartTotpEnrolmentParams,
  type StartTotpEnrolmentResult,
  type TotpEnrolmentError,
} from "./lib/d1/totp.ts";
export { type QrSvgOptions, totpQrSvg } from "./lib/d1/qr.ts";
export { PASSKEY_CEREMONY_SECONDS } from "./lib/d1/passkey_ceremony.ts";
export {
  listPasskeys,
  type ListPasskeysResult,
  MAX_PASSKEY_NAME,
  MAX_PASSKEYS,
  type Passkey,
  PASSKEY_ALGORITHMS,
  type PasskeyOptionsJSON,
  passkeyRegistrationOptions,
  type PasskeyRegistrationOptionsParams,
  type PasskeyRegistrationOptionsResult,
  passkeySignInOptions,
  type PasskeySignInOptionsParams,
  type PasskeySignInOptionsResult,
  type RelyingParty,
  removePasskey,
  type RemovePasskeyParams,
  type RemovePasskeyResult,
  removePassword,
  type RemovePasswordParams,
  type RemovePasswordResult,
  renamePasskey,
  type RenamePasskeyParams,
  type RenamePasskeyResult,
  verifyPasskeyRegistration,
  type VerifyPasskeyRegistrationParams,
  type VerifyPasskeyRegistrationResult,
  verifyPasskeySignIn,
  type VerifyPasskeySignInParams,
  type VerifyPasskeySignInResult,
} from "./lib/d1/passkeys.ts";
export {
  deviceOf,
  endOtherSessions,
  type EndOtherSessionsParams,
  type EndOtherSessionsResult,
  endSession,
  type EndSessionParams,
  type EndSessionResult,
  listUserSessions,
  type ListUserSessionsParams,
  type ListUserSessionsResult,
  MAX_SESSION_NAME,
  placeOf,
  renameSession,
  type RenameSessionParams,
  type RenameSessionResult,
  SESSION_SEEN_RESOLUTION_MS,
  type SessionRecordInput,
  type UserSessionRecord,
} from "./lib/d1/user_sessions.ts";
export {
  AUTH_EVENT_TYPES,
  type AuthEvent,
  type AuthEventSink,
  authEventStore,
  type AuthEventType,
  type EventOptions,
  listAuthEvents,
  type ListAuthEventsParams,
  type ListAuthEventsResult,
  MAX_AUTH_EVENTS_PAGE,
  type StoredAuthEvent,
} from "./lib/d1/events.ts";
export {
  stepUp,
  type StepUpError,
  type StepUpParams,
  type StepUpResult,
} from "./lib/d1/step_up.ts";
export {
  applyUserListIndexes,
  getUserByEmail,
  type GetUserByEmailResult,
  listUsers,
  type ListUsersParams,
  type ListUsersResult,
  MAX_SEARCH_LENGTH,
  MAX_USERS_PAGE,
  USER_LIST_INDEXES_SQL,
  type UsersPage,
} from "./lib/d1/user_list.ts";
export {
  adminRemoveUser,
  type AdminRemoveUserParams,
  type AdminRemoveUserResult,
  resendVerification,
  type ResendVerificationParams,
  type ResendVerificationResult,
  setAdmin,
  type SetAdminParams,
  type SetAdminResult,
} from "./lib/d1/admin.ts";
export {
  type LinkedSignIn,
  listLinkedSignIns,
  type ListLinkedSignInsResult,
  setPassword,
  type SetPasswordError,
  type SetPasswordParams,
  type SetPasswordResult,
} from "./lib/d1/sign_ins.ts";
export {
  applyAuditSchema,
  AUDIT_SCHEMA_SQL,
  type AuditEntry,
  listAudit,
  type ListAuditParams,
  type ListAuditResult,
  MAX_AUDIT_PAGE,
  MAX_AUDIT_VALUE,
  recordAudit,
  type RecordAuditParams,
  type RecordAuditResult,
  reserveAudit,
  type ReserveAuditParams,
  UNFINISHED_AUDIT_ACTION,
  withdrawAudit,
} from "./lib/d1/audit.ts";
export type { GenerationLookup, Session, SessionConfig } from "./lib/auth/session.ts";
export type { RevocationStore } from "./lib/auth/revocation.ts";
export { parseDatabaseName, planSetup, type SetupInput, type SetupPlan } from "./lib/d1/setup.ts";

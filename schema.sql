-- Gatehouse: the tables of the database user flows (@gatehouse/gatehouse/d1).
-- Every statement is idempotent: re-running this file is safe. Sites add their own tables in
-- their own migrations. Times are milliseconds since the epoch.

CREATE TABLE IF NOT EXISTS users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL COLLATE NOCASE,
  password_hash TEXT,
  email_verified INTEGER NOT NULL DEFAULT 0,
  stamp TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  name TEXT,
  is_admin INTEGER NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX IF NOT EXISTS users_email_unique ON users (email COLLATE NOCASE);

CREATE TABLE IF NOT EXISTS oauth_identities (
  provider TEXT NOT NULL,
  provider_user_id TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  email TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (provider, provider_user_id)
);

CREATE INDEX IF NOT EXISTS oauth_identities_user ON oauth_identities (user_id);

CREATE TABLE IF NOT EXISTS otp_codes (
  email TEXT NOT NULL COLLATE NOCASE,
  purpose TEXT NOT NULL,
  code_hash TEXT NOT NULL,
  password_hash TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  sent_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (email, purpose)
);

CREATE INDEX IF NOT EXISTS otp_codes_expires ON otp_codes (expires_at);

-- Throttles of guessing (password sign-in, signup codes, re-authentication): one row per
-- bucket. kind: 'sign-in' | 'code' | 'reauth'; account: the canonical e-mail, '' for a
-- client-wide bucket; client: the site-given client key, '' for an account-wide bucket.
CREATE TABLE IF NOT EXISTS auth_throttle (
  kind TEXT NOT NULL,
  account TEXT NOT NULL,
  client TEXT NOT NULL,
  failures INTEGER NOT NULL DEFAULT 0,
  blocked_until INTEGER NOT NULL DEFAULT 0,
  known INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (kind, account, client)
);

CREATE INDEX IF NOT EXISTS auth_throttle_updated ON auth_throttle (updated_at);

-- Sessions ended by a sign-out (the core's session id), kept until the session would have
-- expired (expires_at); each sign-out deletes up to 100 expired rows.
CREATE TABLE IF NOT EXISTS revoked_sessions (
  id TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS revoked_sessions_expires ON revoked_sessions (expires_at);

-- Second factors (0.3.0). A user's TOTP: the shared key sealed with AES-GCM under a key
-- derived from TOKEN_SECRET (never in clear); last_step is the newest time step used, so a
-- code (or an older one) is accepted once. confirmed = 0 while the enrolment awaits its code.
CREATE TABLE IF NOT EXISTS totp_factors (
  user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  sealed_secret TEXT NOT NULL,
  confirmed INTEGER NOT NULL DEFAULT 0,
  last_step INTEGER NOT NULL DEFAULT -1,
  created_at INTEGER NOT NULL,
  confirmed_at INTEGER
);

-- Single-use backup codes: HMAC-SHA-256 under TOKEN_SECRET only; used_at once spent.
CREATE TABLE IF NOT EXISTS backup_codes (
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  used_at INTEGER,
  PRIMARY KEY (user_id, code_hash)
);

-- Devices that skip the second factor until expires_at: SHA-256 of the device token only.
CREATE TABLE IF NOT EXISTS trusted_devices (
  token_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  label TEXT,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS trusted_devices_user ON trusted_devices (user_id);

-- Passkeys (WebAuthn credentials, 0.3.0): the public key (COSE, base64url), the signature
-- counter, a name and the last use. Several per account.
CREATE TABLE IF NOT EXISTS passkeys (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  public_key TEXT NOT NULL,
  counter INTEGER NOT NULL DEFAULT 0,
  transports TEXT,
  device_type TEXT NOT NULL,
  backed_up INTEGER NOT NULL DEFAULT 0,
  aaguid TEXT,
  attestation TEXT NOT NULL,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER
);

CREATE INDEX IF NOT EXISTS passkeys_user ON passkeys (user_id);

-- Passkey ceremonies under way: the challenge, single-use, for the browser that holds the
-- ceremony token (SHA-256 only here) and, to add a passkey, the session that asked.
CREATE TABLE IF NOT EXISTS passkey_challenges (
  ceremony_hash TEXT PRIMARY KEY,
  purpose TEXT NOT NULL,
  challenge TEXT NOT NULL,
  user_id TEXT,
  session_id TEXT,
  expires_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS passkey_challenges_expires ON passkey_challenges (expires_at);

-- Sessions as records (0.3.0), for sites that show them: one row per recorded sign-in, by the
-- core's session id; ending one also puts its id in revoked_sessions. verified_at is the last
-- time a factor was entered in it (sign-in or step-up).
CREATE TABLE IF NOT EXISTS user_sessions (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name TEXT,
  user_agent TEXT,
  ip_prefix TEXT,
  method TEXT,
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  verified_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS user_sessions_user ON user_sessions (user_id, last_seen_at);

-- Sign-in events (0.3.0) kept by authEventStore: what happened to an account, when, from
-- which client; never a secret.
CREATE TABLE IF NOT EXISTS auth_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  type TEXT NOT NULL,
  user_id TEXT,
  email TEXT,
  client TEXT,
  detail_json TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS auth_events_user ON auth_events (user_id, id);

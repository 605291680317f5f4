/**
 * A fake OAuth provider for tests: one web-standard handler `(Request) => Response` that speaks
 * the JSON shapes of Google's, GitHub's and Microsoft's real endpoints under the path prefixes
 * `/google`, `/github` and `/microsoft` (so a client's `baseUrl` is `<server>/<provider>`).
 *
 * It is stateless, so the same handler works whichever runtime serves it: the scenario is the
 * client id (`ok`, `deny`, `unverified`, `private` (GitHub: no public e-mail),
 * `exchange-fail`, `profile-fail`; Microsoft also `unproven` (an `email` and no `xms_edov` in
 * the ID token: Microsoft's default, and the "nOAuth" case), `edov-false`, `foreign-token`
 * (an ID token for another client), `expired-token`), and the authorization code carries what
 * the token endpoint checks (client id, redirect URI, PKCE challenge, tenant). The client
 * secret must be `secret`. Microsoft's token response carries an ID token (unsigned: a client
 * reads it as received from the token endpoint) with `xms_edov: true` for `ok`.
 *
 * Plain JavaScript (no types) so that Deno, workerd and Node 20 load it unchanged.
 *
 * @module
 */

const enc = new TextEncoder();

function b64url(bytes) {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function encodeJson(value) {
  return b64url(enc.encode(JSON.stringify(value)));
}

function decodeJson(text) {
  try {
    const s = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(s, (c) => c.charCodeAt(0))));
  } catch {
    return null;
  }
}

function json(body, status = 200) {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

async function s256(verifier) {
  return b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(verifier))));
}

/** Routes of each provider, relative to its prefix. */
function route(provider, path) {
  if (provider === "google") {
    if (path === "/o/oauth2/v2/auth") return { kind: "authorize" };
    if (path === "/token") return { kind: "token" };
    if (path === "/v1/userinfo") return { kind: "userinfo" };
  } else if (provider === "github") {
    if (path === "/login/oauth/authorize") return { kind: "authorize" };
    if (path === "/login/oauth/access_token") return { kind: "token" };
    if (path === "/user") return { kind: "userinfo" };
    if (path === "/user/emails") return { kind: "emails" };
  } else if (provider === "microsoft") {
    const m = path.match(/^\/([^/]+)\/oauth2\/v2\.0\/(authorize|token)$/);
    if (m) return { kind: m[2], tenant: m[1] };
    if (path === "/oidc/userinfo") return { kind: "userinfo" };
  }
  return null;
}

function authorize(provider, r, url) {
  const q = url.searchParams;
  const clientId = q.get("client_id");
  const redirect = q.get("redirect_uri");
  const state = q.get("state");
  if (
    q.get("response_type") !== "code" || !clientId || !redirect || !state || !q.get("scope") ||
    q.get("code_challenge_method") !== "S256" || !q.get("code_challenge")
  ) {
    return json({ error: "invalid_request" }, 400);
  }
  const back = new URL(redirect);
  back.searchParams.set("state", state);
  if (clientId === "deny") {
    back.searchParams.set("error", "access_denied");
    back.searchParams.set("error_description", "The user denied the request.");
  } else {
    const code = {
      p: provider,
      c: clientId,
      r: redirect,
      ch: q.get("code_challenge"),
      t: r.tenant,
    };
    back.searchParams.set("code", encodeJson(code));
  }
  return new Response(null, { status: 302, headers: { location: back.href } });
}

async function token(provider, r, request) {
  const fail = () =>
    provider === "github"
      ? json({ error: "bad_verification_code", error_description: "The code is incorrect." })
      : json({ error: "invalid_grant", error_description: "AADSTS70000: invalid grant" }, 400);
  if (request.method !== "POST") return json({ error: "invalid_request" }, 405);
  const form = new URLSearchParams(await request.text());
  const code = decodeJson(form.get("code") ?? "");
  if (
    !code || code.p !== provider || code.c === "exchange-fail" || code.t !== r.tenant ||
    form.get("grant_type") !== "authorization_code" || form.get("client_id") !== code.c ||
    form.get("client_secret") !== "secret" || form.get("redirect_uri") !== code.r ||
    (await s256(form.get("code_verifier") ?? "")) !== code.ch
  ) {
    return fail();
  }
  const accessToken = `at.${encodeJson({ p: provider, c: code.c })}`;
  if (provider === "github") {
    return json({ access_token: accessToken, token_type: "bearer", scope: "read:user,user:email" });
  }
  return json({
    token_type: "Bearer",
    scope: "openid email profile",
    expires_in: 3599,
    access_token: accessToken,
    id_token: provider === "microsoft"
      ? microsoftIdToken(code.c)
      : `${encodeJson({ alg: "none" })}.${encodeJson({})}.`,
  });
}

const MS_SUB = "OLu859SGc2Sr9ZsqbkG-QbeLgJlb41KcdiPoLYNpSFA";
const MS_TENANT = "9e5f6a1b-0c2d-4e3f-8a9b-1c2d3e4f5a6b";
const MS_EMAIL = "grace@contoso.example";

/** Microsoft's ID token for a scenario: `xms_edov` as the scenario says, for client `clientId`. */
function microsoftIdToken(clientId) {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    ver: "2.0",
    iss: `https://login.microsoftonline.com/${MS_TENANT}/v2.0`,
    sub: MS_SUB,
    aud: clientId === "foreign-token" ? "another-client" : clientId,
    exp: clientId === "expired-token" ? now - 60 : now + 3600,
    iat: now,
    nbf: now,
    tid: MS_TENANT,
    oid: "00000000-0000-0000-66f3-3332eca7ea81",
    name: "Grace Hopper",
    preferred_username: MS_EMAIL,
  };
  if (clientId !== "unverified") claims.email = MS_EMAIL;
  if (clientId === "edov-false") claims.xms_edov = false;
  else if (clientId !== "unproven" && clientId !== "unverified") claims.xms_edov = true;
  return `${encodeJson({ typ: "JWT", alg: "none" })}.${encodeJson(claims)}.`;
}

function bearer(provider, request) {
  const auth = request.headers.get("authorization") ?? "";
  const m = auth.match(/^Bearer at\.(.+)$/);
  const t = m && decodeJson(m[1]);
  return t && t.p === provider ? t.c : null;
}

function profile(provider, kind, scenario) {
  if (provider === "google") {
    return {
      sub: "110169484474386276334",
      name: "Ada Lovelace",
      given_name: "Ada",
      family_name: "Lovelace",
      picture: "https://lh3.googleusercontent.com/a/default-user",
      email: "ada@example.com",
      email_verified: scenario !== "unverified",
    };
  }
  if (provider === "microsoft") {
    const info = {
      sub: MS_SUB,
      name: "Grace Hopper",
      family_name: "Hopper",
      given_name: "Grace",
      picture: "https://graph.microsoft.com/v1.0/me/photo/$value",
    };
    // The userinfo has the address (none for `unverified`) and never says whether it is proven.
    if (scenario !== "unverified") info.email = MS_EMAIL;
    return info;
  }
  if (kind === "emails") {
    if (scenario === "ok") {
      return [
        { email: "octocat@example.com", primary: true, verified: true, visibility: "public" },
        { email: "octo-old@example.com", primary: false, verified: true, visibility: null },
      ];
    }
    return [
      { email: "octo-old@example.com", primary: false, verified: true, visibility: null },
      {
        email: "octo-primary@example.com",
        primary: true,
        verified: scenario !== "unverified",
        visibility: "private",
      },
    ];
  }
  return {
    login: "octocat",
    id: 583231,
    node_id: "MDQ6VXNlcjU4MzIzMQ==",
    avatar_url: "https://avatars.githubusercontent.com/u/583231?v=4",
    type: "User",
    name: "The Octocat",
    email: scenario === "ok" ? "octocat@example.com" : null,
  };
}

/**
 * The fake provider's request handler.
 * @param {Request} request
 * @returns {Promise<Response>}
 */
export async function fakeProvider(request) {
  const url = new URL(request.url);
  const m = url.pathname.match(/^\/(google|github|microsoft)(\/.*)$/);
  const r = m && route(m[1], m[2]);
  if (!r) return json({ message: "Not Found" }, 404);
  const provider = m[1];
  if (r.kind === "authorize") return authorize(provider, r, url);
  if (r.kind === "token") return await token(provider, r, request);
  const scenario = bearer(provider, request);
  if (!scenario) return json({ message: "Bad credentials" }, 401);
  if (provider === "github" && !request.headers.get("user-agent")) {
    return json({ message: "Request forbidden by administrative rules." }, 403);
  }
  if (scenario === "profile-fail") return json({ error: "server_error" }, 500);
  return json(profile(provider, r.kind, scenario));
}

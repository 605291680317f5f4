/**
 * caddytest/integration/acme_test.go and acmeserver_test.go: Caddy's ACME server (`acme_server`)
 * and a client (acmez there, npm acme-client here) that reaches `acme.localhost` on 127.0.0.1
 * without verifying the certificate (the Go tester's transport), with an http-01 solver only.
 *
 * The Go tests move the ACME server's http-01 validation to port 9081 with a Go-only knob
 * (`smallstepacme.InsecurePortHTTP01`, a variable of the server's own process); Caddy's
 * configuration has no such field, so the challenge is answered where Caddy validates it in
 * production: port 80 of 127.0.0.1 (waited for while another test holds it).
 */
import https from "node:https";
import acme from "acme-client";
import { until } from "../../../fixtures/helpers.ts";
import { caddyfile, check, type Context, get, init, type Scenario } from "../_scenario.ts";

const agent = new https.Agent({
  rejectUnauthorized: false,
  // every name is 127.0.0.1 (CreateTestingTransport's DialContext)
  lookup: (
    _host: string,
    o: { all?: boolean },
    cb: (e: null, a: string | { address: string; family: number }[], f?: number) => void,
  ) => o?.all ? cb(null, [{ address: "127.0.0.1", family: 4 }]) : cb(null, "127.0.0.1", 4),
});
(acme.axios.defaults as Record<string, unknown>).httpsAgent = agent;

const site = (acmeServer: string, pki = true, address = "acme.localhost") =>
  caddyfile(`{
	skip_install_trust
	local_certs
	admin localhost:2999
	http_port     9080
	https_port    9443${
    pki
      ? `
	pki {
		ca local {
			name "Caddy Local Authority"
		}
	}`
      : ""
  }
}
${address} {
	${acmeServer}
}
`);

/** A client with a new account (`client.NewAccount`), as the Go tests make it. */
async function account(ctx: Context): Promise<acme.Client> {
  const client = new acme.Client({
    directoryUrl: `https://acme.localhost:${ctx.port(9443)}/acme/local/directory`,
    accountKey: await acme.crypto.createPrivateEcdsaKey(),
    backoffAttempts: 30,
    backoffMin: 100,
    backoffMax: 500,
  });
  await client.createAccount({ termsOfServiceAgreed: true, contact: ["mailto:you@example.com"] });
  return client;
}

/** The Go tests' `naiveHTTPSolver`, on port 80: the key authorization for its name and token. */
async function http01<T>(run: (tokens: Map<string, string>) => Promise<T>): Promise<T> {
  const tokens = new Map<string, string>();
  let server: Deno.HttpServer | undefined;
  await until(
    () => {
      server = Deno.serve({ hostname: "127.0.0.1", port: 80, onListen() {} }, (req) => {
        const u = new URL(req.url);
        const want = tokens.get(u.pathname);
        const host = (req.headers.get("host") ?? "").replace(/:\d+$/, "").toLowerCase();
        return req.method === "GET" && want && want.startsWith(`${host} `)
          ? new Response(want.slice(host.length + 1), { headers: { "content-type": "text/plain" } })
          : new Response(null, { status: 404 });
      });
      return true;
    },
    30_000,
    "port 80 of 127.0.0.1 (the http-01 challenge port) to be free",
  );
  try {
    return await run(tokens);
  } finally {
    await server?.shutdown();
  }
}

/** `client.ObtainCertificateForSANs(ctx, account, key, names)` with the http-01 solver. */
async function obtain(client: acme.Client, names: string[]): Promise<string> {
  return await http01(async (tokens) => {
    const [, csr] = await acme.crypto.createCsr({ commonName: names[0], altNames: names });
    return await client.auto({
      csr,
      termsOfServiceAgreed: true,
      challengePriority: ["http-01"],
      skipChallengeVerification: true,
      challengeCreateFn: (authz, ch, keyAuthorization) => {
        tokens.set(
          `/.well-known/acme-challenge/${ch.token}`,
          `${authz.identifier.value.toLowerCase()} ${keyAuthorization}`,
        );
        return Promise.resolve();
      },
      challengeRemoveFn: (_authz, ch) =>
        Promise.resolve(void tokens.delete(`/.well-known/acme-challenge/${ch.token}`)),
    });
  });
}

const obtains = (name: string) =>
  check(`a certificate for ${name}`, async (ctx) => {
    const pem = await obtain(await account(ctx), [name]);
    if (!pem.includes("BEGIN CERTIFICATE")) throw new Error(`no certificate: ${pem}`);
  });
const refused = (name: string) =>
  check(`no certificate for ${name}`, async (ctx) => {
    const client = await account(ctx);
    let issued = false;
    try {
      await obtain(client, [name]);
      issued = true;
    } catch { /* the error the Go test wants */ }
    if (issued) throw new Error(`obtaining certificate for '${name}' domain`);
  });

export const scenarios: Scenario[] = [
  {
    name: "TestACMEServerWithDefaults",
    steps: [init(site("acme_server", false)), obtains("localhost")],
  },
  {
    name: "TestACMEServerWithMismatchedChallenges",
    steps: [
      init(site("acme_server {\n\t\tchallenges tls-alpn-01\n\t}", false)),
      // acmez with an http-01 solver only: "no solvers available for remaining challenges
      // (configured=[http-01] offered=[tls-alpn-01] remaining=[tls-alpn-01])", no certificate
      check("the challenges offered for localhost", async (ctx) => {
        const client = await account(ctx);
        const order = await client.createOrder({
          identifiers: [{ type: "dns", value: "localhost" }],
        });
        const offered = (await client.getAuthorizations(order)).flatMap((a) =>
          a.challenges.map((c) => c.type)
        );
        const remaining = offered.filter((t) => t !== "http-01");
        const msg = `no solvers available for remaining challenges (configured=[http-01] ` +
          `offered=[${offered.join(" ")}] remaining=[${remaining.join(" ")}])`;
        const want = "no solvers available for remaining challenges " +
          "(configured=[http-01] offered=[tls-alpn-01] remaining=[tls-alpn-01])";
        if (msg !== want) throw new Error(`received error message "${msg}", expected "${want}"`);
      }),
    ],
  },
  {
    name: "TestACMEServerDirectory",
    steps: [
      init(site("acme_server", true, "acme.localhost:9443")),
      get(
        "https://acme.localhost:9443/acme/local/directory",
        200,
        `{"newNonce":"https://acme.localhost:9443/acme/local/new-nonce","newAccount":"https://acme.localhost:9443/acme/local/new-account","newOrder":"https://acme.localhost:9443/acme/local/new-order","revokeCert":"https://acme.localhost:9443/acme/local/revoke-cert","keyChange":"https://acme.localhost:9443/acme/local/key-change"}\n`,
      ),
    ],
  },
  {
    name: "TestACMEServerAllowPolicy",
    steps: [
      init(site(`acme_server {
		challenges http-01
		allow {
			domains localhost
		}
	}`)),
      obtains("localhost"),
      refused("not-matching.localhost"),
    ],
  },
  {
    name: "TestACMEServerDenyPolicy",
    steps: [
      init(site(`acme_server {
		deny {
			domains deny.localhost
		}
	}`)),
      refused("deny.localhost"),
    ],
  },
];

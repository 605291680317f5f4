/**
 * Caddy's own integration scenarios (`caddytest/integration` of caddyserver/caddy at 0cf03d32f,
 * after v2.11.4), run against one `gatehouse run` process through its admin API as Caddy's
 * harness runs them against Caddy: each Go test function is a step named after it, its configs
 * posted to `/load` in turn, its requests sent by a client that behaves as the Go tester's (see
 * _client.ts), its assertions checked (scenarios/*.ts hold them as data). Current Caddy passes
 * every one. A scenario Gatehouse does not pass is listed in {@linkcode KNOWN} with the reason,
 * and asserted as failing, so that the test notices when it starts to pass.
 *
 * Not run here:
 * - `caddyfile_adapt_test.go` `TestCaddyfileAdaptToJSON`: the Caddyfile adapt corpus, run by
 *   tests/server/gatehousefile/corpus.test.ts.
 * - `panic_test.go` `TestHandlerPanicLogsAtError`: it registers Go modules of its own
 *   (`http.handlers.panic_test`, `caddy.logging.writers.panic_test`) in the server's process
 *   and boots Caddy in-process with `caddy.Load`; there is no such handler to configure here.
 * - `caddytest_test.go` `TestReplaceCertificatePaths`: a unit test of the harness's own
 *   path rewriting (_tree.ts `certificatePaths` does that rewriting here).
 *
 * Scenarios also covered elsewhere, in more depth or against Caddy 2.6.2:
 * parity2/placeholders_handlers.test.ts (the `uri` query scenarios of caddyfile_test.go,
 * TestUriReplace, TestHttpRequestLocalPortPlaceholder, TestRespondWithJSON, TestIntercept),
 * fields/protocols.test.ts (h2listener_test.go), caddy_messages.test.ts
 * (TestACMEServerDirectory, the duplicate ID of TestCheckID), pki/lifetime.test.ts (pki_test.go),
 * parity2/proxy_protocol_upstream.test.ts (proxyprotocol_test.go), parity2/proxy_selection.test.ts
 * (TestWeightedRoundRobinSelectionValidation), tls/redirect_order.test.ts
 * (TestAutoHTTPSRedirectSortingExactMatchOverWildcard), tls/v1_certificate.test.ts (the v1
 * certificates of sni_test.go and stream_test.go) and security/forward_auth_copy.test.ts
 * (forwardauth_test.go).
 */
import assert from "node:assert/strict";
import { startRunner } from "./_runner.ts";
import type { Scenario } from "./_scenario.ts";
import { scenarios as acme } from "./scenarios/acme.ts";
import { scenarios as autohttps } from "./scenarios/autohttps.ts";
import { scenarios as caddyfile } from "./scenarios/caddyfile.ts";
import { scenarios as caddytest } from "./scenarios/caddytest.ts";
import { scenarios as forwardauth } from "./scenarios/forwardauth.ts";
import { scenarios as h2listener } from "./scenarios/h2listener.ts";
import { scenarios as handler } from "./scenarios/handler.ts";
import { scenarios as intercept } from "./scenarios/intercept.ts";
import { scenarios as leafcertloaders } from "./scenarios/leafcertloaders.ts";
import { scenarios as listener } from "./scenarios/listener.ts";
import { scenarios as map } from "./scenarios/map.ts";
import { scenarios as pki } from "./scenarios/pki.ts";
import { scenarios as proxyprotocol } from "./scenarios/proxyprotocol.ts";
import { scenarios as reverseproxy } from "./scenarios/reverseproxy.ts";
import { scenarios as sni } from "./scenarios/sni.ts";
import { scenarios as stream } from "./scenarios/stream.ts";

const ADAPT_ORDER = "/adapt gives the same config (deep-equal, as the corpus test checks) " +
  "with its keys in another order; Caddy's text (Go struct field order, sorted maps and " +
  "module objects, HTML-escaped strings) is not reproduced";

/** The scenarios, by the Go file they come from. */
const FILES: [string, Scenario[]][] = [
  ["caddytest/caddytest_test.go", caddytest],
  ["acme_test.go, acmeserver_test.go", acme],
  ["autohttps_test.go", autohttps],
  ["caddyfile_test.go", caddyfile],
  ["forwardauth_test.go", forwardauth],
  ["h2listener_test.go", h2listener],
  ["handler_test.go", handler],
  ["intercept_test.go", intercept],
  ["leafcertloaders_test.go", leafcertloaders],
  ["listener_test.go", listener],
  ["map_test.go", map],
  ["pki_test.go", pki],
  ["proxyprotocol_test.go", proxyprotocol],
  ["reverseproxy_test.go", reverseproxy],
  ["sni_test.go", sni],
  ["stream_test.go", stream],
];

/** Scenarios Gatehouse does not pass, and why. */
const KNOWN: Record<string, string> = {
  TestValidPrefix: ADAPT_ORDER,
  TestHttpOnlyOnDomainWithSNI: ADAPT_ORDER,
  TestReverseProxyHealthCheckUnixSocket: "health_port with a unix socket upstream is refused " +
    "at load (a socket has no port to check); Caddy accepts it and checks TCP " +
    "<socket path>:<port>",
  TestReverseProxySNIPlaceHolder: "the upstream is the same server, whose default engine " +
    "answers {http.request.tls.server_name} with the Host name (Deno.serve does not expose the " +
    "SNI; the SNI sent is checked in parity2/proxy_sni_placeholder.test.ts), and versions 3 " +
    "with tls_insecure_skip_verify is refused (Deno's QUIC client always checks the certificate)",
};

Deno.test({
  name: "Caddy's integration scenarios against gatehouse run",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const runner = await startRunner();
    let passed = 0;
    let total = 0;
    try {
      for (const [file, list] of FILES) {
        for (const s of list) {
          total++;
          await t.step(s.name, async () => {
            const failures = await runner.run(s);
            if (failures.length === 0) passed++;
            else console.log(`${s.name}:\n  ${failures.join("\n  ")}`);
            const known = KNOWN[s.name];
            if (known) {
              assert.ok(
                failures.length > 0,
                `${s.name} (${file}) passes now: take it out of the known differences (${known})`,
              );
              console.log(`known difference: ${known}`);
            } else {
              assert.deepEqual(failures, [], `${s.name} (${file})`);
            }
          });
        }
      }
    } finally {
      console.log(`${passed} of ${total} Caddy integration scenarios pass`);
      await runner.stop();
    }
  },
});

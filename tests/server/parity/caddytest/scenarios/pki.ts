/** caddytest/integration/pki_test.go */
import { json, loadError, type Scenario } from "../_scenario.ts";

const acmeServer = (lifetime: number, intermediate: number) =>
  json({
    admin: { disabled: true },
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [":443"],
            routes: [{
              handle: [{
                handler: "subroute",
                routes: [{ handle: [{ ca: "internal", handler: "acme_server", lifetime }] }],
              }],
            }],
          },
        },
      },
      pki: {
        certificate_authorities: {
          internal: {
            install_trust: false,
            intermediate_lifetime: intermediate,
            name: "Internal CA",
          },
        },
      },
    },
  });

export const scenarios: Scenario[] = [
  {
    name: "TestLeafCertLifetimeLessThanIntermediate",
    steps: [loadError(
      acmeServer(604800000000000, 604800000000000),
      "should be less than intermediate certificate lifetime",
    )],
  },
  {
    name: "TestIntermediateLifetimeLessThanRoot",
    steps: [loadError(
      acmeServer(2592000000000000, 311040000000000000),
      "intermediate certificate lifetime must be less than actual root certificate lifetime",
    )],
  },
];

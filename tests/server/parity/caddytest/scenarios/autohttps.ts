/** caddytest/integration/autohttps_test.go */
import { caddyfile, get, init, json, redirect, type Scenario } from "../_scenario.ts";

const GLOBAL = `{
	skip_install_trust
	admin localhost:2999
	http_port     9080
	https_port    9443
}
`;
const LOCAL = GLOBAL.replace("}\n", "\tlocal_certs\n}\n");
const yahaha = (site: string) => caddyfile(`${GLOBAL}${site}\nrespond "Yahaha! You found me!"\n`);

export const scenarios: Scenario[] = [
  {
    name: "TestAutoHTTPtoHTTPSRedirectsImplicitPort",
    steps: [
      init(yahaha("localhost")),
      redirect("http://localhost:9080/", "https://localhost/", 308),
    ],
  },
  {
    name: "TestAutoHTTPtoHTTPSRedirectsExplicitPortSameAsHTTPSPort",
    steps: [
      init(yahaha("localhost:9443")),
      redirect("http://localhost:9080/", "https://localhost/", 308),
    ],
  },
  {
    name: "TestAutoHTTPtoHTTPSRedirectsExplicitPortDifferentFromHTTPSPort",
    steps: [
      init(yahaha("localhost:1234")),
      redirect("http://localhost:9080/", "https://localhost:1234/", 308),
    ],
  },
  {
    name: "TestAutoHTTPtoHTTPSRedirectsPreferHTTPSPortOverAlternatePort",
    steps: [
      init(caddyfile(`${LOCAL}localhost {
	respond "Canonical"
}

localhost:10443 {
	respond "Alternate"
}
`)),
      redirect("http://localhost:9080/", "https://localhost/", 308),
    ],
  },
  {
    name: "TestAutoHTTPRedirectsWithHTTPListenerFirstInAddresses",
    steps: [
      init(json({
        admin: { listen: "localhost:2999" },
        apps: {
          http: {
            http_port: 9080,
            https_port: 9443,
            servers: {
              ingress_server: {
                listen: [":9080", ":9443"],
                routes: [{ match: [{ host: ["localhost"] }] }],
              },
            },
          },
          pki: { certificate_authorities: { local: { install_trust: false } } },
        },
      })),
      redirect("http://localhost:9080/", "https://localhost/", 308),
    ],
  },
  {
    name: "TestAutoHTTPRedirectsInsertedBeforeUserDefinedCatchAll",
    steps: [
      init(caddyfile(`${LOCAL}http://:9080 {
	respond "Foo"
}
http://baz.localhost:9080 {
	respond "Baz"
}
bar.localhost {
	respond "Bar"
}
`)),
      redirect("http://bar.localhost:9080/", "https://bar.localhost/", 308),
      get("http://foo.localhost:9080/", 200, "Foo"),
      get("http://baz.localhost:9080/", 200, "Baz"),
    ],
  },
  {
    name: "TestAutoHTTPRedirectsInsertedBeforeUserDefinedCatchAllWithNoExplicitHTTPSite",
    steps: [
      init(caddyfile(`${LOCAL}http://:9080 {
	respond "Foo"
}
bar.localhost {
	respond "Bar"
}
`)),
      redirect("http://bar.localhost:9080/", "https://bar.localhost/", 308),
      get("http://foo.localhost:9080/", 200, "Foo"),
      get("http://baz.localhost:9080/", 200, "Foo"),
    ],
  },
  {
    name: "TestAutoHTTPSRedirectSortingExactMatchOverWildcard",
    steps: [
      init(caddyfile(`${LOCAL}*.localhost:10443 {
	respond "Wildcard"
}
dev.localhost {
	respond "Exact"
}
`)),
      redirect("http://dev.localhost:9080/", "https://dev.localhost/", 308),
      redirect("http://foo.localhost:9080/", "https://foo.localhost:10443/", 308),
    ],
  },
];

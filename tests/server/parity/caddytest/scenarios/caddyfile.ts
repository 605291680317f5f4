/** caddytest/integration/caddyfile_test.go */
import {
  adapt,
  caddyfile,
  get,
  init,
  loadError,
  redirect,
  request,
  type Scenario,
  type Step,
} from "../_scenario.ts";

/** The global options of the `uri` and placeholder scenarios. */
const SHORT = `{
	admin localhost:2999
	http_port     9080
}
`;
const uri = (name: string, directives: string, url: string, body: string): Scenario => ({
  name,
  steps: [
    init(caddyfile(`${SHORT}:9080
${directives}

respond "{query}"`)),
    get(`http://localhost:9080${url}`, 200, body),
  ],
});

const errors = (name: string, body: string, checks: [string, number, string][]): Scenario => ({
  name,
  steps: [
    init(caddyfile(`${SHORT}localhost:9080 {
	root * /srv
${body}
}`)),
    ...checks.map(([path, status, text]) => get(`http://localhost:9080${path}`, status, text)),
  ],
});

/** One site adapted by TestValidPrefix: `listen`, and the site's `handle` if it has one. */
const prefixJSON = (listen: string, handle?: unknown) =>
  JSON.stringify(
    {
      apps: {
        http: {
          servers: {
            srv0: {
              listen: [listen],
              routes: [{
                match: [{ host: ["localhost"] }],
                ...(handle
                  ? { handle: [{ handler: "subroute", routes: [{ handle: [handle] }] }] }
                  : {}),
                terminal: true,
              }],
            },
          },
        },
      },
    },
    null,
    "\t",
  );
const proxy = (transport?: unknown) => ({
  handler: "reverse_proxy",
  ...(transport ? { transport } : {}),
  upstreams: [{ dial: "localhost:3000" }],
});

const invalidPrefix: [string, string][] = [
  ["wss://localhost", "the scheme wss:// is only supported in browsers; use https:// instead"],
  ["ws://localhost", "the scheme ws:// is only supported in browsers; use http:// instead"],
  ["someInvalidPrefix://localhost", "unsupported URL scheme someinvalidprefix://"],
  ["h2c://localhost", "unsupported URL scheme h2c://"],
  [
    "localhost, wss://localhost",
    "the scheme wss:// is only supported in browsers; use https:// instead",
  ],
  [
    `localhost {
  				reverse_proxy ws://localhost"
            }`,
    "the scheme ws:// is only supported in browsers; use http:// instead",
  ],
  [
    `localhost {
  				reverse_proxy someInvalidPrefix://localhost"
			}`,
    "unsupported URL scheme someinvalidprefix://",
  ],
];

export const scenarios: Scenario[] = [
  {
    name: "TestRespond",
    steps: [
      init(caddyfile(`
  {
    admin localhost:2999
    http_port     9080
    https_port    9443
    grace_period  1ns
  }

  localhost:9080 {
    respond /version 200 {
      body "hello from localhost"
    }
    }
  `)),
      get("http://localhost:9080/version", 200, "hello from localhost"),
    ],
  },
  {
    name: "TestRedirect",
    steps: [
      init(caddyfile(`
  {
    admin localhost:2999
    http_port     9080
    https_port    9443
    grace_period  1ns
  }

  localhost:9080 {

    redir / http://localhost:9080/hello 301

    respond /hello 200 {
      body "hello from localhost"
    }
    }
  `)),
      redirect("http://localhost:9080/", "http://localhost:9080/hello", 301),
      // following the redirect
      get("http://localhost:9080/", 200, "hello from localhost"),
    ],
  },
  {
    name: "TestDuplicateHosts",
    steps: [loadError(
      caddyfile(`
    localhost:9080 {
    }

    localhost:9080 {
    }
    `),
      "ambiguous site definition",
    )],
  },
  {
    name: "TestReadCookie",
    steps: [
      init(caddyfile(`
  {
    skip_install_trust
    admin localhost:2999
    http_port     9080
    https_port    9443
    grace_period  1ns
  }

  localhost:9080 {
    templates {
      root testdata
    }
    file_server {
      root testdata
    }
  }
  `)),
      // the cookie the Go test puts in its client's jar for http://localhost
      request({
        url: "http://localhost:9080/cookie.html",
        headers: { Cookie: "clientname=caddytest" },
      }, {
        status: 200,
        body: "<h2>Cookie.ClientName caddytest</h2>",
      }),
    ],
  },
  {
    name: "TestReplIndex",
    steps: [
      init(caddyfile(`
  {
    skip_install_trust
    admin localhost:2999
    http_port     9080
    https_port    9443
    grace_period  1ns
  }

  localhost:9080 {
    templates {
      root testdata
    }
    file_server {
      root testdata
      index "index.{host}.html"
    }
  }
  `)),
      get("http://localhost:9080/", 200, ""),
    ],
  },
  {
    name: "TestInvalidPrefix",
    steps: invalidPrefix.map(([config, error]): Step => loadError(caddyfile(config), error)),
  },
  {
    name: "TestValidPrefix",
    steps: [
      adapt("localhost", prefixJSON(":443")),
      adapt("https://localhost", prefixJSON(":443")),
      adapt("http://localhost", prefixJSON(":80")),
      adapt(
        `localhost {
			reverse_proxy http://localhost:3000
		 }`,
        prefixJSON(":443", proxy()),
      ),
      adapt(
        `localhost {
			reverse_proxy https://localhost:3000
		 }`,
        prefixJSON(":443", proxy({ protocol: "http", tls: {} })),
      ),
      adapt(
        `localhost {
			reverse_proxy h2c://localhost:3000
		 }`,
        prefixJSON(":443", proxy({ protocol: "http", versions: ["h2c", "2"] })),
      ),
      adapt(
        `localhost {
			reverse_proxy localhost:3000
		 }`,
        prefixJSON(":443", proxy()),
      ),
    ],
  },
  uri(
    "TestUriReplace",
    String.raw`uri replace "\}" %7D
uri replace "\{" %7B`,
    "/endpoint?test={%20content%20}",
    "test=%7B%20content%20%7D",
  ),
  uri(
    "TestUriOps",
    `uri query +foo bar
uri query -baz
uri query taz test
uri query key=value example
uri query changethis>changed`,
    "/endpoint?foo=bar0&baz=buz&taz=nottest&changethis=val",
    "changed=val&foo=bar0&foo=bar&key%3Dvalue=example&taz=test",
  ),
  {
    name: "TestHttpRequestLocalPortPlaceholder",
    steps: [
      init(caddyfile(`${SHORT}:9080
respond "{http.request.local.port}"`)),
      get("http://localhost:9080/", 200, "9080"),
    ],
  },
  uri(
    "TestSetThenAddQueryParams",
    "uri query foo bar\nuri query +foo baz",
    "/endpoint",
    "foo=bar&foo=baz",
  ),
  uri(
    "TestSetThenDeleteParams",
    "uri query bar foo{query.foo}\nuri query -foo",
    "/endpoint?foo=bar",
    "bar=foobar",
  ),
  uri(
    "TestRenameAndOtherOps",
    "uri query foo>bar\nuri query bar taz\nuri query +bar baz",
    "/endpoint?foo=bar",
    "bar=taz&bar=baz",
  ),
  uri("TestReplaceOps", "uri query foo bar baz", "/endpoint?foo=bar", "foo=baz"),
  uri(
    "TestReplaceWithReplacementPlaceholder",
    "uri query foo bar {query.placeholder}",
    "/endpoint?placeholder=baz&foo=bar",
    "foo=baz&placeholder=baz",
  ),
  uri(
    "TestReplaceWithKeyPlaceholder",
    "uri query {query.placeholder} bar baz",
    "/endpoint?placeholder=foo&foo=bar",
    "foo=baz&placeholder=foo",
  ),
  uri("TestPartialReplacement", "uri query foo ar az", "/endpoint?foo=bar", "foo=baz"),
  uri("TestNonExistingSearch", "uri query foo var baz", "/endpoint?foo=bar", "foo=bar"),
  uri("TestReplaceAllOps", "uri query * bar baz", "/endpoint?foo=bar&baz=bar", "baz=baz&foo=baz"),
  uri(
    "TestUriOpsBlock",
    `uri query {
	+foo bar
	-baz
	taz test
}`,
    "/endpoint?foo=bar0&baz=buz&taz=nottest",
    "foo=bar0&foo=bar&taz=test",
  ),
  errors(
    "TestHandleErrorSimpleCodes",
    `	error /private* "Unauthorized" 410
	error /hidden* "Not found" 404

	handle_errors 404 410 {
		respond "404 or 410 error"
	}`,
    [["/private", 410, "404 or 410 error"], ["/hidden", 404, "404 or 410 error"]],
  ),
  errors(
    "TestHandleErrorRange",
    `	error /private* "Unauthorized" 410
	error /hidden* "Not found" 404

	handle_errors 4xx {
		respond "Error in the [400 .. 499] range"
	}`,
    [
      ["/private", 410, "Error in the [400 .. 499] range"],
      ["/hidden", 404, "Error in the [400 .. 499] range"],
    ],
  ),
  errors(
    "TestHandleErrorSort",
    `	error /private* "Unauthorized" 410
	error /hidden* "Not found" 404
	error /internalerr* "Internal Server Error" 500

	handle_errors {
		respond "Fallback route: code outside the [400..499] range"
	}
	handle_errors 4xx {
		respond "Error in the [400 .. 499] range"
	}`,
    [
      ["/internalerr", 500, "Fallback route: code outside the [400..499] range"],
      ["/hidden", 404, "Error in the [400 .. 499] range"],
    ],
  ),
  errors(
    "TestHandleErrorRangeAndCodes",
    `	error /private* "Unauthorized" 410
	error /threehundred* "Moved Permanently" 301
	error /internalerr* "Internal Server Error" 500

	handle_errors 500 3xx {
		respond "Error code is equal to 500 or in the [300..399] range"
	}
	handle_errors 4xx {
		respond "Error in the [400 .. 499] range"
	}`,
    [
      ["/internalerr", 500, "Error code is equal to 500 or in the [300..399] range"],
      ["/threehundred", 301, "Error code is equal to 500 or in the [300..399] range"],
      ["/private", 410, "Error in the [400 .. 499] range"],
    ],
  ),
  errors(
    "TestHandleErrorSubHandlers",
    `	file_server
	error /*/internalerr* "Internal Server Error" 500

	handle_errors 404 {
		handle /en/* {
			respond "not found" 404
		}
		handle /es/* {
			respond "no encontrado" 404
		}
		handle {
			respond "default not found"
		}
	}
	handle_errors {
		handle {
			respond "Default error"
		}
		handle /en/* {
			respond "English error"
		}
	}`,
    [
      ["/en/notfound", 404, "not found"],
      ["/es/notfound", 404, "no encontrado"],
      ["/notfound", 404, "default not found"],
      ["/es/internalerr", 500, "Default error"],
      ["/en/internalerr", 500, "English error"],
    ],
  ),
  {
    name: "TestInvalidSiteAddressesAsDirectives",
    steps: [
      loadError(
        caddyfile(`
			handle {
				file_server
			}`),
        "Caddyfile:2: parsed 'handle' as a site address, but it is a known directive; directives must appear in a site block",
      ),
      loadError(
        caddyfile(`
			reverse_proxy localhost:9000 localhost:9001 {
				file_server
			}`),
        "Caddyfile:2: parsed 'reverse_proxy' as a site address, but it is a known directive; directives must appear in a site block",
      ),
    ],
  },
];

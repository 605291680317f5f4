/** caddytest/caddytest_test.go (the harness's own tests that run a server) */
import { get, init, json, request, type Scenario } from "../_scenario.ts";

const headers = { "Content-Type": "application/json" };
const sServer1 =
  `{"@id":"s_server","listen":[":9080"],"routes":[{"@id":"route1","handle":[{"handler":"static_response","body":"Hello 2"}]}]}`;
const sServer2 =
  `{"@id":"s_server","listen":[":9080"],"routes":[{"@id":"route1","handle":[{"handler":"static_response","body":"Hello2"}],"match":[{"path":["/route_1/*"]}]}]}`;
const route2 =
  `{"@id":"route2","handle": [{"handler": "static_response","body": "route2"}],"match":[{"path":["/route_2/*"]}]}`;
const admin = (method: string, path: string, body: string, status: number, text: string) =>
  request({ method, url: `http://localhost:2999${path}`, headers, body }, { status, body: text });

export const scenarios: Scenario[] = [
  {
    name: "TestLoadUnorderedJSON",
    steps: [
      init(json({
        logging: {
          logs: {
            default: { level: "DEBUG", writer: { output: "stdout" } },
            sStdOutLogs: {
              level: "DEBUG",
              writer: { output: "stdout" },
              include: ["http.*", "admin.*"],
            },
            sFileLogs: {
              level: "DEBUG",
              writer: { output: "stdout" },
              include: ["http.*", "admin.*"],
            },
          },
        },
        admin: { listen: "localhost:2999" },
        apps: {
          pki: { certificate_authorities: { local: { install_trust: false } } },
          http: {
            http_port: 9080,
            https_port: 9443,
            servers: {
              s_server: {
                listen: [":9080"],
                routes: [
                  { handle: [{ handler: "static_response", body: "Hello" }] },
                  { match: [{ host: ["localhost", "127.0.0.1"] }] },
                ],
                logs: {
                  default_logger_name: "sStdOutLogs",
                  logger_names: { localhost: "sStdOutLogs", "127.0.0.1": "sFileLogs" },
                },
              },
            },
          },
        },
      })),
      request({ url: "http://localhost:9080/" }, { status: 200 }),
    ],
  },
  {
    name: "TestCheckID",
    steps: [
      init(json({
        admin: { listen: "localhost:2999" },
        apps: {
          http: {
            http_port: 9080,
            servers: {
              s_server: {
                "@id": "s_server",
                listen: [":9080"],
                routes: [{ handle: [{ handler: "static_response", body: "Hello" }] }],
              },
            },
          },
        },
      })),
      // PUT to an existing ID conflicts
      admin(
        "PUT",
        "/id/s_server",
        sServer1,
        409,
        `{"error":"[/config/apps/http/servers/s_server] key already exists: s_server"}\n`,
      ),
      // POST replaces the object fully
      admin("POST", "/id/s_server", sServer1, 200, ""),
      get("http://localhost:9080/", 200, "Hello 2"),
      admin("POST", "/id/s_server", sServer2, 200, ""),
      // an identical PATCH succeeds (the config-unchanged branch)
      admin("PATCH", "/id/s_server", sServer2, 200, ""),
      // a PUT at /id/route1 (routes/0) puts route2 before route1
      admin("PUT", "/id/route1", route2, 200, ""),
      get(
        "http://localhost:2999/config/",
        200,
        `{"admin":{"listen":"localhost:2999"},"apps":{"http":{"http_port":9080,"servers":{"s_server":{"@id":"s_server","listen":[":9080"],"routes":[{"@id":"route2","handle":[{"body":"route2","handler":"static_response"}],"match":[{"path":["/route_2/*"]}]},{"@id":"route1","handle":[{"body":"Hello2","handler":"static_response"}],"match":[{"path":["/route_1/*"]}]}]}}}}}\n`,
      ),
      // a second route2 appended: duplicate ID
      admin(
        "POST",
        "/id/route2",
        route2,
        400,
        `{"error":"indexing config: duplicate ID 'route2' found at /config/apps/http/servers/s_server/routes/0 and /config/apps/http/servers/s_server/routes/2"}\n`,
      ),
      admin(
        "PATCH",
        "/id/route1",
        `{"@id":"route1","handle":[{"handler":"static_response","body":"route1"}],"match":[{"path":["/route_1/*"]}]}`,
        200,
        "",
      ),
      get("http://localhost:9080/route_1/", 200, "route1"),
    ],
  },
];

/**
 * `deno task mail:listen` and `deno task mail:replay`: the server's webhooks on a developer's
 * machine (see `webhook_relay.ts`). Deno only (not part of the npm mirror).
 *
 * ```sh
 * # register a webhook for account 1 that points here, forward what it gets, and deactivate
 * # the webhook when stopped (Ctrl-C or SIGTERM)
 * MAIL_OPERATOR_TOKEN=... deno task mail:listen --account 1 --forward-to http://127.0.0.1:3000/hooks
 * # or listen for a webhook you registered yourself (its URL is this listener's)
 * deno task mail:listen --secret whsec_... --port 9000 --forward-to http://127.0.0.1:3000/hooks
 * # send a past delivery again
 * MAIL_OPERATOR_TOKEN=... deno task mail:replay 88 --secret whsec_... --forward-to http://127.0.0.1:3000/hooks
 * ```
 *
 * @module
 */
import { parseArgs } from "node:util";
import { MailroomClient } from "./mailroom_client.ts";
import { MAIL_EVENT_TYPES, type MailEventType } from "./db.ts";
import { forwarder, type ForwardResult, replayDelivery } from "./webhook_relay.ts";
import { guardInspectorSignal } from "../inspector_signal.ts";

const DEFAULT_API = "http://127.0.0.1:8787/api/account-docs/v2";

/** The flags, declared once: usage text and parsing come from here. */
const FLAGS = {
  "forward-to": { type: "string", help: "local URL the deliveries go to (required)" },
  api: { type: "string", help: `the mail API's base URL (default ${DEFAULT_API})` },
  account: { type: "string", help: "listen: register a webhook for this account id" },
  events: { type: "string", help: "listen: comma-separated event types (default all)" },
  secret: { type: "string", help: "the webhook's secret (replay; listen without --account)" },
  host: { type: "string", help: "listen: interface to listen on (default 127.0.0.1)" },
  port: { type: "string", help: "listen: port to listen on (default 0: any free port)" },
  help: { type: "boolean", help: "show this text" },
} as const;

const USAGE = `Usage:
  deno task mail:listen --forward-to URL (--account ID | --secret WHSEC) [options]
  deno task mail:replay DELIVERY_ID --forward-to URL --secret WHSEC [options]

Every delivery's signature is checked with the webhook's secret; a delivery that fails the
check is refused and not forwarded. A webhook that listen registered (--account) is deactivated
when it stops (Ctrl-C, SIGTERM). The mailroom calls (registering, deactivating, fetching a
delivery) use MAIL_OPERATOR_TOKEN.

Options:
${Object.entries(FLAGS).map(([name, f]) => `  --${name.padEnd(12)} ${f.help}`).join("\n")}
`;

function fail(message: string): never {
  console.error(`error: ${message}\n\n${USAGE}`);
  Deno.exit(2);
}

function describe(r: ForwardResult): string {
  const head = `delivery ${r.delivery} (${r.event})`;
  if (!r.verified) return `✗ ${head}: ${r.error}`;
  return r.error
    ? `! ${head}: signature ok; forwarding failed: ${r.error}`
    : `✓ ${head}: signature ok, forwarded → ${r.status}`;
}

function operatorToken(): string {
  const token = Deno.env.get("MAIL_OPERATOR_TOKEN");
  if (!token) {
    fail(
      "MAIL_OPERATOR_TOKEN is not set: it is the operator token the mail server was " +
        "started with (`deno task mail` prints it)",
    );
  }
  return token;
}

async function listen(values: Record<string, string | boolean | undefined>): Promise<void> {
  const forwardTo = String(values["forward-to"]);
  const api = String(values.api ?? DEFAULT_API).replace(/\/+$/, "");
  if (!values.account && !values.secret) fail("give --account (to register a webhook) or --secret");
  const events = values.events === undefined
    ? undefined
    : String(values.events).split(",").map((e) => e.trim()) as MailEventType[];
  if (events?.some((e) => !MAIL_EVENT_TYPES.includes(e))) {
    fail(`--events must be some of ${MAIL_EVENT_TYPES.join(", ")}`);
  }
  const port = Number(values.port ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail("--port must be a port number");
  let secret = values.secret === undefined ? "" : String(values.secret);
  const handler = forwarder({
    get secret() {
      return secret;
    },
    forwardTo,
    onDelivery: (r) => console.log(describe(r)),
  });
  const server = Deno.serve({
    hostname: String(values.host ?? "127.0.0.1"),
    port,
    onListen: () => {},
  }, (request) => handler(request));
  const url = `http://${server.addr.hostname}:${server.addr.port}/`;
  // the webhook this listener registered, deactivated when it stops
  let registered: { ops: MailroomClient; id: string } | null = null;
  if (values.account) {
    const ops = new MailroomClient({ baseUrl: api, operatorToken: operatorToken() });
    try {
      const hook = await ops.registerWebhook(String(values.account), url, events);
      secret = hook.secret;
      registered = { ops, id: hook.webhook_id };
      console.log(`Registered webhook ${hook.webhook_id} for account ${values.account} → ${url}`);
    } catch (err) {
      await server.shutdown();
      console.error(`error: registering the webhook failed: ${(err as Error).message}`);
      Deno.exit(1);
    }
  }
  console.log(`  secret:   ${secret}`);
  console.log(`Listening on ${url}, forwarding verified deliveries to ${forwardTo}`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    let code = 0;
    if (registered) {
      try {
        await registered.ops.deactivateWebhook(registered.id);
        console.log(`Deactivated webhook ${registered.id}`);
      } catch (err) {
        code = 1;
        console.error(
          `error: deactivating webhook ${registered.id} failed: ${(err as Error).message}. ` +
            `Deactivate it with POST ${api}/mailroom/webhooks/${registered.id}/deactivate.`,
        );
      }
    }
    await server.shutdown();
    Deno.exit(code);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
}

async function replay(
  id: string | undefined,
  values: Record<string, string | boolean | undefined>,
): Promise<void> {
  if (!id) fail("give the delivery id to replay (mailroom: GET /webhooks/{id}/deliveries)");
  if (!values.secret) fail("--secret is required: the webhook's secret checks the signature");
  try {
    const result = await replayDelivery({
      api: String(values.api ?? DEFAULT_API).replace(/\/+$/, ""),
      operatorToken: operatorToken(),
      deliveryId: id,
      secret: String(values.secret),
      forwardTo: String(values["forward-to"]),
    });
    console.log(describe(result));
    Deno.exit(result.verified && !result.error ? 0 : 1);
  } catch (err) {
    console.error(`error: ${(err as Error).message}`);
    Deno.exit(1);
  }
}

if (import.meta.main) {
  guardInspectorSignal(); // SIGUSR1 must not open Deno's inspector (docs/security.md)
  let parsed;
  try {
    parsed = parseArgs({ args: Deno.args, options: FLAGS, allowPositionals: true, strict: true });
  } catch (err) {
    fail((err as Error).message);
  }
  const [command, ...rest] = parsed.positionals;
  if (parsed.values.help) {
    console.log(USAGE);
    Deno.exit(0);
  }
  if (!parsed.values["forward-to"]) fail("--forward-to is required");
  if (!URL.canParse(String(parsed.values["forward-to"]))) fail("--forward-to must be a URL");
  if (command === "listen" && rest.length === 0) await listen(parsed.values);
  else if (command === "replay" && rest.length <= 1) await replay(rest[0], parsed.values);
  else fail(`unknown command: ${[command, ...rest].join(" ")}`);
}

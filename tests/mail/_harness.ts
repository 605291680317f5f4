/**
 * Test harness: a real mail server on a libSQL temp file, served on 127.0.0.1 port 0, with
 * typed clients for both sides.
 */
import { createClient } from "@libsql/client";
import { ResponseChecker } from "./_openapi.ts";
import {
  createMailServer,
  MailClient,
  MailroomClient,
  type MailServer,
  type MailServerOptions,
} from "../../mail.ts";

export const OPERATOR_TOKEN = "test-operator-token-0123456789";

/** A 1×1 PNG. */
export const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

/** A tiny PDF. */
export const PDF = new TextEncoder().encode(
  "%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n",
);

export interface Account {
  accountId: string;
  userIds: string[];
  addressIds: string[];
  apiKey: string;
  keyId: string;
  client: MailClient;
}

export interface Harness {
  base: string;
  server: MailServer;
  ops: MailroomClient;
  dir: string;
  /** Checks every answer against the OpenAPI document. */
  checker: ResponseChecker;
  account(opts?: { sandbox?: boolean; users?: number }): Promise<Account>;
  receive(addressId: string, sender?: string, receivedAt?: Date): Promise<string>;
  /** Raw request to the customer API. */
  call(
    method: string,
    path: string,
    opts?: { key?: string; body?: unknown; headers?: Record<string, string> },
    // deno-lint-ignore no-explicit-any
  ): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

export async function startMail(options: Partial<MailServerOptions> = {}): Promise<Harness> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-mail-" });
  const client = createClient({ url: `file:${dir}/mail.db` });
  const server = await createMailServer({
    client,
    blobDir: `${dir}/blobs`,
    operatorToken: OPERATOR_TOKEN,
    rateLimit: { burst: 100_000, perSecond: 100_000 },
    // the tests' receivers listen on loopback: allowed as an operator would allow them
    webhooks: { baseDelayMs: 50, maxDelayMs: 200, timeoutMs: 2000, allowTargets: ["127.0.0.1"] },
    ...options,
  });
  // every answer is checked against the OpenAPI document; close() fails on any mismatch
  const checker = new ResponseChecker();
  const http = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    checker.wrap((request, info) => server.fetch(request, info)),
  );
  const base = `http://127.0.0.1:${http.addr.port}/api/account-docs/v2`;
  const ops = new MailroomClient({ baseUrl: base, operatorToken: OPERATOR_TOKEN });
  let n = 0;
  const h: Harness = {
    base,
    server,
    ops,
    dir,
    checker,
    async account(opts = {}) {
      const { account_id } = await ops.createAccount({
        name: `Account ${++n}`,
        sandbox: opts.sandbox,
      });
      const userIds: string[] = [];
      const addressIds: string[] = [];
      for (let i = 0; i < (opts.users ?? 1); i++) {
        const { user_id } = await ops.createUser(account_id, `User ${n}.${i}`);
        userIds.push(user_id);
        addressIds.push((await ops.createAddress(account_id, user_id, `Box ${i}`)).address_id);
      }
      const key = await ops.createApiKey(account_id, "test");
      return {
        accountId: account_id,
        userIds,
        addressIds,
        apiKey: key.api_key,
        keyId: key.key_id,
        client: new MailClient({ baseUrl: base, apiKey: key.api_key, retryDelayMs: 50 }),
      };
    },
    async receive(addressId, sender = "Sender", receivedAt) {
      const r = await ops.receiveItem({
        address_id: addressId,
        sender_name: sender,
        envelope: new Blob([PNG], { type: "image/png" }),
        received_at: receivedAt,
      });
      return r.mail_id;
    },
    async call(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.key !== undefined) headers["x-api-key"] = opts.key;
      let body: string | undefined;
      if (opts.body !== undefined) {
        body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
        headers["content-type"] ??= "application/json";
      }
      const res = await fetch(base + path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch { /* keep text */ }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async close() {
      await server.close();
      await http.shutdown();
      client.close();
      await Deno.remove(dir, { recursive: true });
      if (checker.problems.length) {
        throw new Error(
          `answers that do not match the OpenAPI document:\n${checker.problems.join("\n")}`,
        );
      }
    },
  };
  return h;
}

/**
 * Reading one answer of ZeroSSL's API: bytes from the network, parsed once here. The API
 * signals errors in the body (`{"success": false, "error": {"code": 101, "type":
 * "invalid_access_key"}}`), often with HTTP 200, so a body is an error when it says so,
 * whatever the status; a body that is not a JSON object is an error naming the status.
 *
 * @module
 */

/** What to do about the usual API errors, by ZeroSSL's error code. */
const HINTS: Record<number, string> = {
  101: "check api_key (ZeroSSL's API access key, under Developer in its dashboard)",
  102: "the ZeroSSL account of this api_key is not active",
  2801: "this api_key may not do that (the REST API depends on the ZeroSSL plan)",
  2902: "ZeroSSL could not create EAB credentials now; it will be tried again",
  2904: "too many EAB credentials were created today; set external_account to reuse some",
  2905: "too many EAB credentials were created for this user; set external_account",
};

/** Validation failures of one name, summarized from the API's `error.details`. */
function summarizeDetails(details: unknown): string {
  if (typeof details !== "object" || details === null) return "";
  const parts: string[] = [];
  for (const [name, byMethod] of Object.entries(details as Record<string, unknown>)) {
    if (typeof byMethod !== "object" || byMethod === null) continue;
    for (const [where, raw] of Object.entries(byMethod as Record<string, unknown>)) {
      const v = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
      const facts: string[] = [];
      if (v.file_found !== undefined) facts.push(`file_found=${v.file_found}`);
      if (typeof v.error_slug === "string" && v.error_slug) facts.push(v.error_slug);
      if (typeof v.error_info === "string" && v.error_info) facts.push(v.error_info);
      if (v.cname_found !== undefined) facts.push(`cname_found=${v.cname_found}`);
      if (v.record_correct !== undefined) facts.push(`record_correct=${v.record_correct}`);
      if (typeof v.actual_record === "string" && v.actual_record) {
        facts.push(`actual=${v.actual_record}`);
      }
      parts.push(`${name} ${where}${facts.length ? ` (${facts.join(", ")})` : ""}`);
      if (parts.length >= 10) return parts.join("; ") + "; …";
    }
  }
  return parts.join("; ");
}

/** An error answer of ZeroSSL's API. */
export class ZeroSslApiError extends Error {
  /** ZeroSSL's error code (`error.code`; 0 when it sent none). */
  readonly apiCode: number;
  /** ZeroSSL's error type (`error.type`, e.g. `invalid_access_key`). */
  readonly type: string;
  /** The HTTP status of the answer. */
  readonly status: number;

  constructor(what: string, apiCode: number, type: string, status: number, details = "") {
    const hint = HINTS[apiCode];
    super(
      `the ZeroSSL API refused ${what}: ${type || "error"} (code ${apiCode}, HTTP ${status})` +
        (details ? `: ${details}` : "") + (hint ? `; ${hint}` : ""),
    );
    this.name = "ZeroSslApiError";
    this.apiCode = apiCode;
    this.type = type;
    this.status = status;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function falsy(v: unknown): boolean {
  return v === false || v === 0 || v === "0" || v === "false";
}

/**
 * Parses one answer: resolves the JSON object of a success; throws a {@link ZeroSslApiError}
 * for an error payload, and an `Error` naming `what` and the status for anything else.
 * Never throws anything but those two.
 *
 * @example
 * ```ts
 * import { parseApiResponse } from "./response.ts";
 * const ok = parseApiResponse(new TextEncoder().encode('{"id":"a1","status":"draft"}'), 200, "GET /x");
 * ok.status; // "draft"
 * ```
 */
export function parseApiResponse(
  bytes: Uint8Array,
  status: number,
  what: string,
): Record<string, unknown> {
  let body: unknown;
  let text = "";
  try {
    text = new TextDecoder().decode(bytes);
    body = JSON.parse(text);
  } catch {
    const shown = text.replace(/\s+/g, " ").trim().slice(0, 120);
    throw new Error(
      `the ZeroSSL API: ${what}: HTTP ${status}, not a JSON answer` +
        (shown ? ` (${JSON.stringify(shown)})` : " (empty body)"),
    );
  }
  if (!isObject(body)) {
    throw new Error(`the ZeroSSL API: ${what}: HTTP ${status}, the answer is not a JSON object`);
  }
  const err = body.error;
  if (isObject(err) || (typeof err === "string" && err !== "") || falsy(body.success)) {
    const e = isObject(err) ? err : { type: err };
    const code = typeof e.code === "number" && Number.isFinite(e.code) ? e.code : 0;
    const type = typeof e.type === "string" ? e.type.slice(0, 200) : "";
    throw new ZeroSslApiError(what, code, type, status, summarizeDetails(e.details));
  }
  if (status < 200 || status > 299) {
    throw new ZeroSslApiError(what, 0, "", status);
  }
  return body;
}

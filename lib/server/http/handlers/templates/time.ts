/**
 * Go's `time.Time` for templates (`fileStat`'s `ModTime`, sprig's `now` and `date`): a value
 * with Go's methods (`Unix`, `Format`, `Year`, ...) and Go's reference-time layouts
 * (`2006-01-02 15:04:05 -0700 MST`), both to format and to parse (`humanize "time:<layout>"`).
 * Times are in the process's local zone, as Go's `time.Local`.
 *
 * @module
 */
import { FuncError, GoFunc, GoInt, GoObject } from "./gotemplate/mod.ts";

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** The layout tokens, longest first where one is a prefix of another. */
const TOKENS = [
  "January",
  "Monday",
  "2006",
  "-07:00:00",
  "Z07:00:00",
  "-07:00",
  "Z07:00",
  "-0700",
  "Z0700",
  "Jan",
  "Mon",
  "MST",
  "002",
  "-07",
  "Z07",
  "01",
  "02",
  "_2",
  "03",
  "04",
  "05",
  "06",
  "15",
  "PM",
  "pm",
  "1",
  "2",
  "3",
  "4",
  "5",
];

type Piece = { token: string } | { lit: string };

function tokenize(layout: string): Piece[] {
  const out: Piece[] = [];
  let lit = "";
  let i = 0;
  outer: while (i < layout.length) {
    const frac = /^[.,](0+|9+)(?![0-9])/.exec(layout.slice(i));
    if (frac) {
      if (lit) out.push({ lit });
      lit = "";
      out.push({ token: frac[0] });
      i += frac[0].length;
      continue;
    }
    for (const t of TOKENS) {
      if (layout.startsWith(t, i)) {
        // "Jan"/"Mon" followed by a lower-case letter is text ("Monday" is its own token)
        if ((t === "Jan" || t === "Mon") && /[a-z]/.test(layout[i + 3] ?? "")) break;
        if (lit) out.push({ lit });
        lit = "";
        out.push({ token: t });
        i += t.length;
        continue outer;
      }
    }
    lit += layout[i++];
  }
  if (lit) out.push({ lit });
  return out;
}

const p2 = (n: number) => String(n).padStart(2, "0");

function zone(offsetMin: number, colon: boolean, seconds: boolean, short: boolean): string {
  const sign = offsetMin < 0 ? "-" : "+";
  const a = Math.abs(offsetMin);
  const h = p2(Math.floor(a / 60));
  const m = p2(a % 60);
  if (short) return sign + h;
  const sep = colon ? ":" : "";
  return sign + h + sep + m + (seconds ? sep + "00" : "");
}

/** Formats a time with a Go layout, in the local zone or UTC. */
export function formatTime(d: Date, layout: string, utc = false): string {
  const off = utc ? 0 : -d.getTimezoneOffset();
  const t = new Date(d.getTime() + off * 60_000);
  const Y = t.getUTCFullYear();
  const M = t.getUTCMonth();
  const D = t.getUTCDate();
  const h = t.getUTCHours();
  const mi = t.getUTCMinutes();
  const s = t.getUTCSeconds();
  const ms = t.getUTCMilliseconds();
  let out = "";
  for (const p of tokenize(layout)) {
    if ("lit" in p) {
      out += p.lit;
      continue;
    }
    const tok = p.token;
    if (/^[.,](0+|9+)$/.test(tok)) {
      const digits = (String(ms).padStart(3, "0") + "000000").slice(0, tok.length - 1);
      if (tok[1] === "0") out += tok[0] + digits;
      else {
        const trimmed = digits.replace(/0+$/, "");
        if (trimmed) out += tok[0] + trimmed;
      }
      continue;
    }
    switch (tok) {
      case "2006":
        out += String(Y).padStart(4, "0");
        break;
      case "06":
        out += p2(Y % 100);
        break;
      case "January":
        out += MONTHS[M];
        break;
      case "Jan":
        out += MONTHS[M].slice(0, 3);
        break;
      case "01":
        out += p2(M + 1);
        break;
      case "1":
        out += String(M + 1);
        break;
      case "Monday":
        out += DAYS[t.getUTCDay()];
        break;
      case "Mon":
        out += DAYS[t.getUTCDay()].slice(0, 3);
        break;
      case "02":
        out += p2(D);
        break;
      case "_2":
        out += String(D).padStart(2, " ");
        break;
      case "2":
        out += String(D);
        break;
      case "002": {
        const start = Date.UTC(Y, 0, 1);
        out += String(Math.floor((t.getTime() - start) / 86_400_000) + 1).padStart(3, "0");
        break;
      }
      case "15":
        out += p2(h);
        break;
      case "03":
        out += p2(h % 12 || 12);
        break;
      case "3":
        out += String(h % 12 || 12);
        break;
      case "04":
        out += p2(mi);
        break;
      case "4":
        out += String(mi);
        break;
      case "05":
        out += p2(s);
        break;
      case "5":
        out += String(s);
        break;
      case "PM":
        out += h >= 12 ? "PM" : "AM";
        break;
      case "pm":
        out += h >= 12 ? "pm" : "am";
        break;
      case "MST":
        out += off === 0 ? "UTC" : zone(off, false, false, false);
        break;
      default: {
        // zones
        if (tok.startsWith("Z") && off === 0) {
          out += "Z";
          break;
        }
        const body = tok.replace(/^Z/, "-");
        out += zone(off, body.includes(":"), body.length > 6, body === "-07");
      }
    }
  }
  return out;
}

/** Parses a value with a Go layout (`time.Parse`); a FuncError names what did not fit. */
export function parseTime(layout: string, value: string): Date {
  let i = 0;
  let Y = 1, M = 1, D = 1, h = 0, mi = 0, s = 0, ms = 0;
  let pm: boolean | null = null;
  let off: number | null = null;
  const bad = (what: string): never => {
    throw new FuncError(
      `parsing time ${JSON.stringify(value)} as ${JSON.stringify(layout)}: cannot parse ${
        JSON.stringify(value.slice(i))
      } as ${JSON.stringify(what)}`,
    );
  };
  const num = (min: number, max: number, tok: string) => {
    const m = new RegExp(`^\\d{${min},${max}}`).exec(value.slice(i));
    if (!m) bad(tok);
    i += m![0].length;
    return Number(m![0]);
  };
  const word = (list: string[], short: boolean, tok: string) => {
    for (let k = 0; k < list.length; k++) {
      const w = short ? list[k].slice(0, 3) : list[k];
      if (value.slice(i, i + w.length).toLowerCase() === w.toLowerCase()) {
        i += w.length;
        return k;
      }
    }
    return bad(tok);
  };
  for (const p of tokenize(layout)) {
    if ("lit" in p) {
      if (!value.startsWith(p.lit, i)) bad(p.lit);
      i += p.lit.length;
      continue;
    }
    const tok = p.token;
    if (/^[.,](0+|9+)$/.test(tok)) {
      const m = /^[.,](\d+)/.exec(value.slice(i));
      if (m) {
        ms = Math.floor(Number("0." + m[1]) * 1000);
        i += m[0].length;
      } else if (tok[1] === "0") bad(tok);
      continue;
    }
    switch (tok) {
      case "2006":
        Y = num(4, 4, tok);
        break;
      case "06":
        Y = num(2, 2, tok);
        Y += Y >= 69 ? 1900 : 2000;
        break;
      case "January":
        M = word(MONTHS, false, tok) + 1;
        break;
      case "Jan":
        M = word(MONTHS, true, tok) + 1;
        break;
      case "01":
        M = num(2, 2, tok);
        break;
      case "1":
        M = num(1, 2, tok);
        break;
      case "Monday":
        word(DAYS, false, tok);
        break;
      case "Mon":
        word(DAYS, true, tok);
        break;
      case "02":
        D = num(2, 2, tok);
        break;
      case "_2":
        if (value[i] === " ") i++;
        D = num(1, 2, tok);
        break;
      case "2":
        D = num(1, 2, tok);
        break;
      case "002":
        num(3, 3, tok);
        break;
      case "15":
        h = num(1, 2, tok);
        break;
      case "03":
      case "3":
        h = num(tok.length, 2, tok);
        break;
      case "04":
      case "4":
        mi = num(tok.length, 2, tok);
        break;
      case "05":
      case "5":
        s = num(tok.length, 2, tok);
        break;
      case "PM":
      case "pm": {
        const a = value.slice(i, i + 2).toUpperCase();
        if (a !== "AM" && a !== "PM") bad(tok);
        pm = a === "PM";
        i += 2;
        break;
      }
      case "MST": {
        const m = /^[A-Z]{3,5}|^[+-]\d{2,4}/.exec(value.slice(i));
        if (!m) bad(tok);
        if (m![0] === "UTC" || m![0] === "GMT") off ??= 0;
        i += m![0].length;
        break;
      }
      default: {
        if (tok.startsWith("Z") && value[i] === "Z") {
          i++;
          off = 0;
          break;
        }
        const m = /^([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?/.exec(value.slice(i));
        if (!m) bad(tok);
        off = (m![1] === "-" ? -1 : 1) * (Number(m![2]) * 60 + Number(m![3] ?? 0));
        i += m![0].length;
      }
    }
  }
  if (i < value.length) {
    throw new FuncError(
      `parsing time ${JSON.stringify(value)}: extra text: ${JSON.stringify(value.slice(i))}`,
    );
  }
  if (pm !== null) h = (h % 12) + (pm ? 12 : 0);
  if (M < 1 || M > 12) {
    throw new FuncError(`parsing time ${JSON.stringify(value)}: month out of range`);
  }
  if (D < 1 || D > 31) {
    throw new FuncError(`parsing time ${JSON.stringify(value)}: day out of range`);
  }
  const utc = Date.UTC(Y, M - 1, D, h, mi, s, ms);
  return new Date(utc - (off ?? 0) * 60_000);
}

/** Go's `time.Time`. */
export class GoTime extends GoObject {
  readonly goType = "time.Time";
  constructor(readonly date: Date, readonly utc = false) {
    super();
  }
  override format(): string {
    return formatTime(this.date, "2006-01-02 15:04:05.999999999 -0700 MST", this.utc);
  }
  override method(name: string): GoFunc | undefined {
    const d = this.date;
    const f = (impl: () => unknown) => new GoFunc(name, [], null, impl, false);
    const local = () => new Date(d.getTime() + (this.utc ? 0 : -d.getTimezoneOffset() * 60_000));
    switch (name) {
      case "Unix":
        return f(() => new GoInt("int64", BigInt(Math.floor(d.getTime() / 1000))));
      case "UnixMilli":
        return f(() => new GoInt("int64", BigInt(d.getTime())));
      case "UnixNano":
        return f(() => new GoInt("int64", BigInt(d.getTime()) * 1_000_000n));
      case "Format":
        return new GoFunc(
          name,
          ["string"],
          null,
          (l) => formatTime(d, l as string, this.utc),
          false,
        );
      case "String":
        return f(() => this.format());
      case "UTC":
        return f(() => new GoTime(d, true));
      case "Local":
        return f(() => new GoTime(d, false));
      case "Year":
        return f(() => BigInt(local().getUTCFullYear()));
      case "Month":
        return f(() => MONTHS[local().getUTCMonth()]);
      case "Day":
        return f(() => BigInt(local().getUTCDate()));
      case "Hour":
        return f(() => BigInt(local().getUTCHours()));
      case "Minute":
        return f(() => BigInt(local().getUTCMinutes()));
      case "Second":
        return f(() => BigInt(local().getUTCSeconds()));
      case "Weekday":
        return f(() => DAYS[local().getUTCDay()]);
    }
    return undefined;
  }
}

export { MONTHS };

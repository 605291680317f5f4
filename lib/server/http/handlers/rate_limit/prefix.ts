/**
 * Keys grouped by network (caddy-ratelimit's `applyNetworkPrefix`): a key that is an IP
 * address becomes its network with the zone's prefix length (`203.0.113.0/24`,
 * `2001:db8::/64`), so every address of that network shares one limiter. A key that is no
 * address, or whose family has no prefix set, stays as it is.
 *
 * @module
 */
import { isV4, parseIP } from "../../../net/ip.ts";

const ALL = (1n << 128n) - 1n;

function v6Text(n: bigint): string {
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((n >> BigInt(i * 16)) & 0xffffn));
  // the longest run of two or more zero groups becomes "::" (the first of equal runs)
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(":");
  return `${hex.slice(0, best).join(":")}::${hex.slice(best + bestLen).join(":")}`;
}

/**
 * The key's network when it is an address of a family with a prefix set (`v4`, `v6`: prefix
 * lengths, 0 = none), else the key unchanged.
 *
 * @example
 * ```ts
 * import { networkKey } from "./prefix.ts";
 * networkKey("203.0.113.7", 24, 0); // "203.0.113.0/24"
 * networkKey("2001:db8::1", 0, 64); // "2001:db8::/64"
 * networkKey("alice", 24, 64); // "alice"
 * ```
 */
export function networkKey(key: string, v4: number, v6: number): string {
  if (key === "" || key.includes("[") || key.includes("%")) return key;
  const ip = parseIP(key);
  if (ip === null) return key;
  if (isV4(ip)) {
    if (v4 === 0) return key;
    const n = Number(ip & 0xffffffffn);
    const masked = v4 === 32 ? n : (n & ~((1 << (32 - v4)) - 1)) >>> 0;
    return `${masked >>> 24}.${(masked >>> 16) & 255}.${(masked >>> 8) & 255}.${
      masked & 255
    }/${v4}`;
  }
  if (v6 === 0) return key;
  const mask = (ALL << BigInt(128 - v6)) & ALL;
  return `${v6Text(ip & mask)}/${v6}`;
}

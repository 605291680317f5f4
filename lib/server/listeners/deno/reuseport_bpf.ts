/**
 * Classic BPF programs that pick the socket of an SO_REUSEPORT group a new connection goes to
 * (`SO_ATTACH_REUSEPORT_CBPF`): the kernel runs the program on the connection's first packet
 * (the SYN) and uses its result as an index into the group. Each program is an array of
 * `struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }` (8 bytes, little-endian here).
 *
 * @module
 */

// instruction codes (linux/filter.h)
const LD_B_ABS = 0x30; // A = packet byte at k
const LD_H_IND = 0x48; // A = packet 16-bit word at X + k
const LDX_IMM = 0x01; // X = k
const ALU_RSH_K = 0x74; // A >>= k
const ALU_AND_K = 0x54; // A &= k
const ALU_LSH_K = 0x64; // A <<= k
const TAX = 0x07; // X = A
const JMP_JA = 0x05; // jump k forward
const JMP_JEQ_K = 0x15; // A == k ? jump jt : jump jf
const RET_K = 0x06; // return k
/** Offsets from here are relative to the network (IP) header (`SKF_NET_OFF`). */
const NET = -0x100000;

type Insn = [code: number, jt: number, jf: number, k: number];

function encode(insns: Insn[]): Uint8Array {
  const out = new Uint8Array(insns.length * 8);
  const v = new DataView(out.buffer);
  insns.forEach(([code, jt, jf, k], i) => {
    v.setUint16(i * 8, code, true);
    out[i * 8 + 2] = jt;
    out[i * 8 + 3] = jf;
    v.setInt32(i * 8 + 4, k, true);
  });
  return out;
}

/**
 * Every new connection goes to the socket at `index`.
 *
 * @example
 * ```ts
 * import { toIndex } from "./reuseport_bpf.ts";
 * toIndex(1).length; // 8: one instruction
 * ```
 */
export function toIndex(index: number): Uint8Array {
  return encode([[RET_K, 0, 0, index]]);
}

/**
 * A connection from one of `ports` (its TCP source port) goes to the socket at `hit`, any
 * other to the socket at `miss`. Reads the IPv4 header length from the packet; an IPv6 SYN is
 * taken to carry no extension header (true of this host's own connections, which are the
 * ones matched).
 *
 * @example
 * ```ts
 * import { bySourcePort } from "./reuseport_bpf.ts";
 * bySourcePort([40001, 40002], 1, 0).length; // 8 bytes per instruction
 * ```
 */
export function bySourcePort(ports: number[], hit: number, miss: number): Uint8Array {
  if (ports.length === 0 || ports.length > 200) throw new RangeError("1 to 200 ports");
  const n = ports.length;
  return encode([
    [LD_B_ABS, 0, 0, NET], // version and header length
    [ALU_RSH_K, 0, 0, 4],
    [JMP_JEQ_K, 0, 2, 6],
    [LDX_IMM, 0, 0, 40], // IPv6: the TCP header follows the 40-byte header
    [JMP_JA, 0, 0, 4],
    [LD_B_ABS, 0, 0, NET], // IPv4: 4 × the header length field
    [ALU_AND_K, 0, 0, 0x0f],
    [ALU_LSH_K, 0, 0, 2],
    [TAX, 0, 0, 0],
    [LD_H_IND, 0, 0, NET], // the TCP source port
    // port i: equal → the "hit" return (n - i instructions ahead), else the next comparison
    ...ports.map((p, i): Insn => [JMP_JEQ_K, n - i, 0, p]),
    [RET_K, 0, 0, miss],
    [RET_K, 0, 0, hit],
  ]);
}

/**
 * A DNS server on 127.0.0.1 (UDP) answering A and AAAA questions from a table, NXDOMAIN for
 * names it does not have, an empty answer for a type a name lacks; it counts the questions.
 */
import dgram from "node:dgram";

export interface DnsTable {
  [name: string]: { a?: string[]; aaaa?: string[] };
}

export interface DnsServer {
  port: number;
  /** Questions asked: `name type`. */
  asked: string[];
  close(): Promise<void>;
}

function v6Bytes(s: string): number[] {
  const [h, t] = s.includes("::") ? s.split("::") : [s, ""];
  const head = h ? h.split(":") : [];
  const tail = t ? t.split(":") : [];
  const groups = [...head, ...Array(8 - head.length - tail.length).fill("0"), ...tail];
  return groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]);
}

export async function startDns(table: DnsTable): Promise<DnsServer> {
  const sock = dgram.createSocket("udp4");
  await new Promise<void>((r) => sock.bind(0, "127.0.0.1", () => r()));
  const asked: string[] = [];
  sock.on("message", (msg: Uint8Array, peer: { port: number; address: string }) => {
    const labels: string[] = [];
    let i = 12;
    while (i < msg.length && msg[i] !== 0) {
      labels.push(new TextDecoder().decode(msg.subarray(i + 1, i + 1 + msg[i])));
      i += 1 + msg[i];
    }
    const end = i + 5;
    const name = labels.join(".").toLowerCase();
    const qtype = (msg[end - 4] << 8) | msg[end - 3];
    asked.push(`${name} ${qtype === 28 ? "AAAA" : qtype === 1 ? "A" : qtype}`);
    const entry = table[name];
    const records = !entry
      ? []
      : qtype === 1
      ? entry.a ?? []
      : qtype === 28
      ? entry.aaaa ?? []
      : [];
    const answers = records.flatMap((addr) => {
      const data = qtype === 1 ? addr.split(".").map(Number) : v6Bytes(addr);
      return [0xc0, 12, 0, qtype, 0, 1, 0, 0, 0, 60, 0, data.length, ...data];
    });
    const header = [msg[0], msg[1], 0x81, entry ? 0x80 : 0x83, 0, 1, 0, records.length, 0, 0, 0, 0];
    sock.send(
      new Uint8Array([...header, ...msg.subarray(12, end), ...answers]),
      peer.port,
      peer.address,
    );
  });
  return {
    port: (sock.address() as { port: number }).port,
    asked,
    close: () => new Promise<void>((r) => sock.close(() => r())),
  };
}

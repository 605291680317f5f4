/**
 * The certificate facts read without an X.509 library (`certificateFacts`, `der.ts`): the same
 * validity, common name, names and serial as `@peculiar/x509` reads, for certificates made by
 * openssl (IPv6 names, a serial with its high bit set, a GeneralizedTime validity, UTF-8 and
 * several common names) and by the local CA; and reading them does not load the library.
 */
import assert from "node:assert/strict";
import { certificateFacts, generateKey, makeRoot, x509 } from "../../../lib/server/pki/x509.ts";
import { certificateNames, pemDecode } from "../../../lib/server/pki/der.ts";

const dec = new TextDecoder();

async function openssl(dir: string, name: string, args: string[]): Promise<string> {
  const out = await new Deno.Command("openssl", {
    args: ["req", "-x509", "-nodes", "-keyout", `${dir}/${name}.key`, "-out", `${dir}/${name}.pem`]
      .concat(["-days", "2"], args),
    stderr: "piped",
  }).output();
  assert.ok(out.success, dec.decode(out.stderr));
  return await Deno.readTextFile(`${dir}/${name}.pem`);
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"];

async function certificates(dir: string): Promise<Record<string, string>> {
  return {
    names: await openssl(dir, "names", [
      ...EC,
      ...["-subj", "/O=X/CN=Ex Ample/CN=second", "-set_serial", "0x80aabbcc"],
      "-addext",
      "subjectAltName=DNS:Foo.Example.com,IP:127.0.0.1,IP:2001:db8::1,IP:::1,IP:fe80:0:0:1::," +
      "IP:1:0:0:2:0:0:0:3,IP:0:0:0:0:0:0:0:0,IP:1:0:2:0:3:0:4:0,email:a@b.c",
    ]),
    long: await openssl(dir, "long", [...EC, "-subj", "/CN=long", "-days", "40000"]),
    utf8: await openssl(dir, "utf8", [
      ...["-newkey", "rsa:2048", "-utf8", "-subj", "/C=DE/CN=Grüße", "-set_serial", "0"],
    ]),
    root: (await makeRoot("Test Root", await generateKey())).pem,
  };
}

Deno.test("pki: certificateFacts reads what @peculiar/x509 reads", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const x = await x509();
    for (const [name, pem] of Object.entries(await certificates(dir))) {
      const c = new x.X509Certificate(pem);
      const san = c.getExtension(x.SubjectAlternativeNameExtension);
      const expected = {
        notBefore: c.notBefore,
        notAfter: c.notAfter,
        commonName: c.subjectName.getField("CN")[0] ?? "",
        names: san?.names.items.filter((n) => n.type === "dns" || n.type === "ip")
          .map((n) => n.value.toLowerCase()) ?? [],
        serial: c.serialNumber,
      };
      assert.deepEqual(await certificateFacts(pem), expected, name);
      assert.deepEqual(certificateNames(pemDecode(pem)[0].der), expected.names, name);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("pki: IPv6 names are written as RFC 5952 says (the longest run of zeros is ::)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const pem = await openssl(dir, "v6", [
      ...EC,
      "-subj",
      "/CN=v6",
      "-addext",
      "subjectAltName=IP:fe80:0:0:1::,IP:1:0:0:2:0:0:0:3,IP:1:0:0:2:0:0:3:4,IP:1:0:2:0:3:0:4:5",
    ]);
    assert.deepEqual(certificateNames(pemDecode(pem)[0].der), [
      "fe80:0:0:1::",
      "1:0:0:2::3",
      "1::2:0:0:3:4",
      "1:0:2:0:3:0:4:5",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("pki: reading a stored certificate's facts does not load @peculiar/x509", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const pem = await openssl(dir, "one", [...EC, "-subj", "/CN=one"]);
    const script = `${dir}/read.ts`;
    const lib = new URL("../../../lib/server/pki/x509.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { certificateFacts, x509IfLoaded } from "${lib}";\n` +
        `const f = await certificateFacts(Deno.readTextFileSync("${dir}/one.pem"));\n` +
        `console.log(JSON.stringify({ cn: f.commonName, loaded: x509IfLoaded() !== null }));\n`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", script],
      stderr: "piped",
      stdout: "piped",
    }).output();
    assert.ok(out.success, dec.decode(out.stderr));
    assert.deepEqual(JSON.parse(dec.decode(out.stdout)), { cn: "one", loaded: false });
    assert.ok(pem.includes("BEGIN CERTIFICATE"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

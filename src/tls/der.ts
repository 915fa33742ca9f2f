// The few DER encodings a self-signed certificate needs (X.690). node:crypto makes keys, signs and parses
// certificates, but cannot build one; this is the part it lacks, and nothing more.

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n])
  const bytes: number[] = []
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}

/** A tag-length-value with the given tag byte. */
export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(content.length), content])
}

export const sequence = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items))
export const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items))
export const octetString = (content: Buffer) => tlv(0x04, content)
export const utf8String = (text: string) => tlv(0x0c, Buffer.from(text, 'utf8'))
export const boolean = (value: boolean) => tlv(0x01, Buffer.from([value ? 0xff : 0x00]))
/** A BIT STRING of whole bytes (no unused bits). */
export const bitString = (content: Buffer) => tlv(0x03, Buffer.concat([Buffer.from([0]), content]))
/** [n] EXPLICIT, constructed. */
export const explicit = (n: number, content: Buffer) => tlv(0xa0 | n, content)
/** [n] IMPLICIT, primitive (GeneralName's dNSName is [2], iPAddress [7]). */
export const implicit = (n: number, content: Buffer) => tlv(0x80 | n, content)

/** A non-negative INTEGER from its big-endian bytes (a leading zero keeps it positive). */
export function unsignedInteger(bytes: Buffer): Buffer {
  let start = 0
  while (start < bytes.length - 1 && bytes[start] === 0) start++
  const trimmed = bytes.subarray(start)
  return tlv(0x02, trimmed[0] & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed)
}

export function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number)
  const out = [40 * a + b]
  for (const arc of rest) {
    const groups: number[] = []
    for (let v = arc; ; v = Math.floor(v / 128)) {
      groups.unshift((v % 128) | (groups.length ? 0x80 : 0))
      if (v < 128) break
    }
    out.push(...groups)
  }
  return tlv(0x06, Buffer.from(out))
}

/** UTCTime (dates 1950–2049) or GeneralizedTime (later), as RFC 5280 §4.1.2.5 asks. */
export function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z' // YYYYMMDDHHMMSSZ
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso))
}

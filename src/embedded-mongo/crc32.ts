// CRC-32 (IEEE) for journal frames. zlib.crc32 exists from Node 20.15 / 22.2; older runtimes get a
// table-driven fallback producing the same values.
import * as zlib from 'node:zlib'

type Crc32Fn = (data: Uint8Array, value?: number) => number

const native = (zlib as unknown as { crc32?: Crc32Fn }).crc32

let table: Uint32Array | undefined

function fallback(data: Uint8Array): number {
  if (!table) {
    table = new Uint32Array(256)
    for (let n = 0; n < 256; n++) {
      let c = n
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
      table[n] = c >>> 0
    }
  }
  let crc = 0xffffffff
  for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]) & 0xff] ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

export function crc32(data: Uint8Array): number {
  return native ? native(data) >>> 0 : fallback(data)
}

/** Exposed so a test can check the fallback against the native implementation. */
export const crc32Fallback = fallback

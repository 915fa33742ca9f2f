import { createHash } from 'node:crypto'
import { gzipSync } from 'node:zlib'

// A small but real image: one gzip'd tar layer holding a file that records what was built, a config
// blob naming that layer's diff id, and a Docker v2 (or OCI) manifest. Everything derives from the
// build's inputs (no timestamps), so the same Dockerfile, arguments and context give the same digests.

export interface Blob { digest: string; size: number; mediaType: string; data: Buffer }
export interface BuiltImage { config: Blob; layer: Blob; manifest: { digest: string; mediaType: string; body: Buffer } }

export const sha256 = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`

function tarOf(files: Array<{ name: string; content: Buffer }>): Buffer {
  const blocks: Buffer[] = []
  for (const f of files) {
    const h = Buffer.alloc(512)
    const field = (off: number, len: number, value: string) => h.write(value, off, len, 'latin1')
    const octal = (n: number, len: number) => `${n.toString(8).padStart(len - 1, '0')}\0`
    field(0, 100, f.name)
    field(100, 8, octal(0o644, 8))
    field(108, 8, octal(0, 8))
    field(116, 8, octal(0, 8))
    field(124, 12, octal(f.content.length, 12))
    field(136, 12, octal(0, 12))
    field(148, 8, '        ')
    field(156, 1, '0')
    field(257, 6, 'ustar\0')
    field(263, 2, '00')
    let sum = 0
    for (const b of h) sum += b
    field(148, 8, `${sum.toString(8).padStart(6, '0')}\0 `)
    blocks.push(h, f.content, Buffer.alloc((512 - (f.content.length % 512)) % 512))
  }
  blocks.push(Buffer.alloc(1024))
  return Buffer.concat(blocks)
}

export function buildImage(input: { dockerfile: string; buildArgs: Record<string, string>; contextFiles: Array<{ path: string; digest: string }>; cmd?: string[]; oci: boolean }): BuiltImage {
  const record = JSON.stringify({ dockerfile: input.dockerfile, buildArgs: input.buildArgs, context: input.contextFiles })
  const tar = tarOf([{ name: 'kube-sim-build.json', content: Buffer.from(record) }])
  // zlib writes no timestamp (MTIME 0), so the compressed bytes depend on the content alone.
  const gz = gzipSync(tar, { level: 9 })
  const types = input.oci
    ? { manifest: 'application/vnd.oci.image.manifest.v1+json', config: 'application/vnd.oci.image.config.v1+json', layer: 'application/vnd.oci.image.layer.v1.tar+gzip' }
    : { manifest: 'application/vnd.docker.distribution.manifest.v2+json', config: 'application/vnd.docker.container.image.v1+json', layer: 'application/vnd.docker.image.rootfs.diff.tar.gzip' }
  const layer: Blob = { digest: sha256(gz), size: gz.length, mediaType: types.layer, data: gz }
  const configDoc = {
    architecture: 'amd64', os: 'linux', created: '1970-01-01T00:00:00Z',
    config: { Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'], ...(input.cmd ? { Cmd: input.cmd } : {}) },
    rootfs: { type: 'layers', diff_ids: [sha256(tar)] },
    history: [{ created: '1970-01-01T00:00:00Z', created_by: 'kube-sim build', comment: 'buildkit.dockerfile.v0' }],
  }
  const configData = Buffer.from(JSON.stringify(configDoc))
  const config: Blob = { digest: sha256(configData), size: configData.length, mediaType: types.config, data: configData }
  const body = Buffer.from(JSON.stringify({
    schemaVersion: 2, mediaType: types.manifest,
    config: { mediaType: config.mediaType, digest: config.digest, size: config.size },
    layers: [{ mediaType: layer.mediaType, digest: layer.digest, size: layer.size }],
  }, null, 2))
  return { config, layer, manifest: { digest: sha256(body), mediaType: types.manifest, body } }
}

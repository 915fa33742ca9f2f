import { ApiError } from './status.ts'
import type { Json, JsonObject } from './util.ts'

// kubectl's typed clients (`kubectl create namespace|configmap|secret|serviceaccount`, `auth`,
// `create token`) send bodies as Kubernetes protobuf: the magic "k8s\0" then a runtime.Unknown
// envelope {typeMeta=1{apiVersion=1,kind=2}, raw=2}. Only the few kinds those commands create are
// decoded, through small field-number schemas; anything else is refused with 415 so the client
// reports it rather than silently losing fields.

type Field =
  | { n: string; t: 'string' | 'bytes' | 'int' | 'bool' }
  | { n: string; t: 'msg'; s: Schema }
  | { n: string; t: 'map'; v: 'string' | 'bytes' }
  | { n: string; t: 'repeated-string' }
  | { n: string; t: 'repeated-msg'; s: Schema }
type Schema = Record<number, Field>

const time: Schema = { 1: { n: 'seconds', t: 'int' }, 2: { n: 'nanos', t: 'int' } }
const ownerReference: Schema = { 1: { n: 'kind', t: 'string' }, 3: { n: 'name', t: 'string' }, 4: { n: 'uid', t: 'string' }, 5: { n: 'apiVersion', t: 'string' }, 6: { n: 'controller', t: 'bool' }, 7: { n: 'blockOwnerDeletion', t: 'bool' } }
const objectMeta: Schema = {
  1: { n: 'name', t: 'string' }, 2: { n: 'generateName', t: 'string' }, 3: { n: 'namespace', t: 'string' }, 5: { n: 'uid', t: 'string' },
  6: { n: 'resourceVersion', t: 'string' }, 8: { n: 'creationTimestamp', t: 'msg', s: time },
  11: { n: 'labels', t: 'map', v: 'string' }, 12: { n: 'annotations', t: 'map', v: 'string' },
  13: { n: 'ownerReferences', t: 'repeated-msg', s: ownerReference }, 14: { n: 'finalizers', t: 'repeated-string' },
}
const localRef: Schema = { 1: { n: 'name', t: 'string' } }
const objectRef: Schema = { 1: { n: 'kind', t: 'string' }, 2: { n: 'namespace', t: 'string' }, 3: { n: 'name', t: 'string' }, 4: { n: 'uid', t: 'string' }, 5: { n: 'apiVersion', t: 'string' } }

const schemas: Record<string, Schema> = {
  'v1/ConfigMap': { 1: { n: 'metadata', t: 'msg', s: objectMeta }, 2: { n: 'data', t: 'map', v: 'string' }, 3: { n: 'binaryData', t: 'map', v: 'bytes' }, 4: { n: 'immutable', t: 'bool' } },
  'v1/Secret': { 1: { n: 'metadata', t: 'msg', s: objectMeta }, 2: { n: 'data', t: 'map', v: 'bytes' }, 3: { n: 'type', t: 'string' }, 4: { n: 'stringData', t: 'map', v: 'string' }, 5: { n: 'immutable', t: 'bool' } },
  'v1/Namespace': { 1: { n: 'metadata', t: 'msg', s: objectMeta }, 2: { n: 'spec', t: 'msg', s: { 1: { n: 'finalizers', t: 'repeated-string' } } } },
  'v1/ServiceAccount': { 1: { n: 'metadata', t: 'msg', s: objectMeta }, 2: { n: 'secrets', t: 'repeated-msg', s: objectRef }, 3: { n: 'imagePullSecrets', t: 'repeated-msg', s: localRef }, 4: { n: 'automountServiceAccountToken', t: 'bool' } },
}

interface Raw { no: number; wire: number; value: bigint | Buffer }

function readFields(buf: Buffer): Raw[] {
  const out: Raw[] = []
  let i = 0
  const varint = (): bigint => {
    let r = 0n
    let shift = 0n
    for (;;) {
      if (i >= buf.length) throw new Error('truncated varint')
      const b = buf[i++]
      r |= BigInt(b & 0x7f) << shift
      if (!(b & 0x80)) return r
      shift += 7n
    }
  }
  while (i < buf.length) {
    const key = Number(varint())
    const no = key >>> 3
    const wire = key & 7
    if (wire === 0) out.push({ no, wire, value: varint() })
    else if (wire === 2) { const len = Number(varint()); out.push({ no, wire, value: buf.subarray(i, i + len) }); i += len } else if (wire === 1) { out.push({ no, wire, value: buf.subarray(i, i + 8) }); i += 8 } else if (wire === 5) { out.push({ no, wire, value: buf.subarray(i, i + 4) }); i += 4 } else throw new Error(`unsupported wire type ${wire}`)
  }
  return out
}

function decode(buf: Buffer, schema: Schema): JsonObject {
  const out: JsonObject = {}
  for (const f of readFields(buf)) {
    const field = schema[f.no]
    if (!field) continue
    const bytes = () => f.value as Buffer
    switch (field.t) {
      case 'string': { const s = bytes().toString('utf8'); if (s) out[field.n] = s; break }
      case 'bytes': out[field.n] = bytes().toString('base64'); break
      case 'int': { const v = Number(f.value as bigint); if (v) out[field.n] = v; break }
      case 'bool': out[field.n] = (f.value as bigint) !== 0n; break
      case 'msg': { const m = decode(bytes(), field.s); if (Object.keys(m).length) out[field.n] = m; break }
      case 'repeated-string': (out[field.n] ??= []).push(bytes().toString('utf8')); break
      case 'repeated-msg': (out[field.n] ??= []).push(decode(bytes(), field.s)); break
      case 'map': {
        let k = ''
        let v: Buffer = Buffer.alloc(0)
        for (const e of readFields(bytes())) { if (e.no === 1) k = (e.value as Buffer).toString('utf8'); else if (e.no === 2) v = e.value as Buffer }
        out[field.n] ??= {}
        out[field.n][k] = field.v === 'bytes' ? v.toString('base64') : v.toString('utf8')
        break
      }
    }
  }
  return out
}

export function decodeProtobuf(buf: Buffer): Json {
  if (buf.length < 4 || buf.subarray(0, 4).toString('latin1') !== 'k8s\0') throw new ApiError(415, 'protobuf body without the k8s envelope', 'UnsupportedMediaType')
  let apiVersion = ''
  let kind = ''
  let raw: Buffer | undefined
  for (const f of readFields(buf.subarray(4))) {
    if (f.no === 1) for (const t of readFields(f.value as Buffer)) { if (t.no === 1) apiVersion = (t.value as Buffer).toString(); if (t.no === 2) kind = (t.value as Buffer).toString() }
    if (f.no === 2) raw = f.value as Buffer
  }
  const schema = schemas[`${apiVersion}/${kind}`]
  if (!schema || !raw) throw new ApiError(415, `kube-sim decodes protobuf only for ${Object.keys(schemas).join(', ')}; send ${apiVersion}/${kind} as application/json`, 'UnsupportedMediaType')
  const obj = decode(raw, schema)
  if (obj.metadata?.creationTimestamp) delete obj.metadata.creationTimestamp
  return { apiVersion, kind, ...obj }
}

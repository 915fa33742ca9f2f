// Re-seals every stored secret with the current key, so an old key can then be dropped from
// ENCRYPTION_KEYS_OLD. Records that do not open (a key already gone, tampering) are counted and left alone.
import type { Db } from 'mongodb'
import { Sealer } from './sealer.ts'

/** Every sealed field in the database, and the context (record id) it is bound to. */
export const SEALED_FIELDS: Array<{ collection: string; field: string; context: (id: string) => string }> = [
  { collection: 'clusters', field: 'credentials_sealed', context: (id) => `clusters:${id}` },
  { collection: 'registries', field: 'credentials_sealed', context: (id) => `registries:${id}` },
]

export interface RotationReport { collection: string; resealed: number; current: number; failed: string[] }

export async function rotateKeys(db: Db, sealer: Sealer): Promise<RotationReport[]> {
  const reports: RotationReport[] = []
  for (const { collection, field, context } of SEALED_FIELDS) {
    const report: RotationReport = { collection, resealed: 0, current: 0, failed: [] }
    const c = db.collection<{ _id: string } & Record<string, unknown>>(collection)
    for await (const doc of c.find({ [field]: { $type: 'string' } }, { projection: { [field]: 1 } })) {
      const sealed = doc[field]
      if (!Sealer.isSealed(sealed)) continue
      if (!sealer.needsResealing(sealed)) { report.current++; continue }
      try {
        const value = sealer.open(sealed, context(String(doc._id)))
        // Only replace what is still the value we read, so a concurrent update is never overwritten.
        const res = await c.updateOne({ _id: doc._id, [field]: sealed }, { $set: { [field]: sealer.seal(value, context(String(doc._id))) } })
        if (res.modifiedCount === 1) report.resealed++
      } catch {
        report.failed.push(String(doc._id))
      }
    }
    reports.push(report)
  }
  return reports
}

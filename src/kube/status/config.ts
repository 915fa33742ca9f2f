// Objects that work as soon as they exist: ConfigMaps, Secrets, ServiceAccounts, Namespaces. A Secret's
// data is never read, not even its keys: only its type.
import { result, status, str, type DerivedStatus, type KubeObject } from './types.ts'

export function configMapStatus(o: KubeObject): DerivedStatus {
  const keys = Object.keys((o.data as object | undefined) ?? {}).length + Object.keys((o.binaryData as object | undefined) ?? {}).length
  return result('running', 'present', null, { keys })
}

export function secretStatus(o: KubeObject): DerivedStatus {
  // A metadata-only listing (how a sync reads Secrets) has no type: null rather than a guess.
  return result('running', 'present', null, { type: str(o.type) })
}

export function serviceAccountStatus(_o: KubeObject): DerivedStatus {
  return result('running', 'present', null, {})
}

export function namespaceStatus(o: KubeObject): DerivedStatus {
  const phase = str(status(o).phase) ?? 'Active'
  if (phase === 'Terminating') return result('pending', 'terminating: its objects are being deleted', null, { phase })
  return result('running', 'active', null, { phase })
}

// PersistentVolumeClaims: Bound is working, Pending waits for a volume, Lost lost its volume for good.
import { result, spec, status, str, type DerivedStatus, type KubeObject } from './types.ts'

export function pvcStatus(o: KubeObject): DerivedStatus {
  const phase = str(status(o).phase) ?? 'Pending'
  const counters = {
    phase, capacity: str(status(o).capacity?.storage) ?? str(spec(o).resources?.requests?.storage),
    storageClassName: str(spec(o).storageClassName), volumeName: str(spec(o).volumeName),
  }
  if (phase === 'Bound') return result('running', `bound to ${counters.volumeName ?? 'a volume'}`, null, counters)
  if (phase === 'Lost') return result('failed', 'its volume is gone; the data is lost', null, counters)
  if (phase === 'Pending') return result('pending', 'waiting for a volume', null, counters)
  return result('unknown', `phase ${phase}`, null, counters)
}

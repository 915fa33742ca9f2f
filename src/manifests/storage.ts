// PersistentVolumeClaim. Its mountPath is read by the workloads it is connected to (wiring).
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim'
import { objectMeta, str, type Builder } from './build-context.ts'
import { warnUnusedMountPath } from './config.ts'

export const persistentvolumeclaim: Builder = (input) => {
  const d = input.node.data
  const storageClassName = str(d, 'storageClassName')
  warnUnusedMountPath(input, 'pvc-workload')
  return [new PersistentVolumeClaim({
    metadata: objectMeta(input),
    spec: {
      accessModes: (d.accessModes as Array<'ReadWriteOnce'> | undefined) ?? ['ReadWriteOnce'],
      resources: { requests: { storage: d.storage as string } },
      ...(storageClassName !== undefined && { storageClassName }),
    },
  })]
}

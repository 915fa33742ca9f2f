// CSI volume snapshots (snapshot.storage.k8s.io) and Longhorn (longhorn.io) recurring jobs.
import { field, type CatalogueEntry } from './types.ts'

export const storage: CatalogueEntry[] = [{
  name: 'csi-volume-snapshot',
  display_name: 'CSI volume snapshot',
  description: 'A point-in-time snapshot of a PersistentVolumeClaim. Requires the Kubernetes CSI external-snapshotter (its CRDs and the snapshot-controller) and a CSI driver that supports snapshots, with a VolumeSnapshotClass.',
  version: '1.0.0',
  category: 'storage',
  icon: 'camera',
  crd: { group: 'snapshot.storage.k8s.io', version: 'v1', kind: 'VolumeSnapshot', plural: 'volumesnapshots' },
  config_fields: [
    field.string('pvcName', 'Persistent volume claim', undefined, { required: true, description: 'the claim to snapshot, in the same namespace' }),
    field.string('snapshotClassName', 'Snapshot class', undefined, { description: 'VolumeSnapshotClass to use (the default class when empty)' }),
  ],
  template: `apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  {{- if .snapshotClassName }}
  volumeSnapshotClassName: {{ .snapshotClassName }}
  {{- end }}
  source:
    persistentVolumeClaimName: {{ .pvcName }}
`,
}, {
  name: 'longhorn-recurring-job',
  display_name: 'Longhorn recurring job',
  description: 'Snapshots or backs up the Longhorn volumes of a group on a cron schedule, keeping a number of copies. Requires Longhorn 1.5 or later (longhorn.io/v1beta2); backups also need a backup target. Longhorn reads recurring jobs from its own namespace (longhorn-system), so deploy this node there; volumes join through the recurring-job-group label.',
  version: '1.0.0',
  category: 'storage',
  icon: 'clock',
  crd: { group: 'longhorn.io', version: 'v1beta2', kind: 'RecurringJob', plural: 'recurringjobs' },
  config_fields: [
    field.string('cron', 'Schedule', '0 3 * * *', { required: true, description: 'cron expression' }),
    field.select('task', 'Task', ['snapshot', 'backup', 'snapshot-cleanup', 'snapshot-delete', 'filesystem-trim'], 'snapshot'),
    field.number('retain', 'Copies kept', 7, { required: true }),
    field.number('concurrency', 'Volumes at once', 2, { required: true }),
    field.string('group', 'Volume group', 'default', { required: true, description: 'the recurring-job group whose volumes it applies to' }),
  ],
  template: `apiVersion: longhorn.io/v1beta2
kind: RecurringJob
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  cron: {{ .cron }}
  task: {{ .task }}
  retain: {{ .retain }}
  concurrency: {{ .concurrency }}
  groups:
    - {{ .group }}
`,
}]

// KubeVirt (kubevirt.io): virtual machines scheduled as pods.
import { field, type CatalogueEntry } from './types.ts'

export const virtualization: CatalogueEntry[] = [{
  name: 'kubevirt-virtual-machine',
  display_name: 'KubeVirt virtual machine',
  description: 'A virtual machine booted from a container disk, with an optional cloud-init user-data disk. Requires KubeVirt (the virt-operator and its KubeVirt custom resource) on nodes that allow hardware virtualization (or software emulation enabled).',
  version: '1.0.0',
  category: 'virtualization',
  icon: 'server',
  crd: { group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachine', plural: 'virtualmachines' },
  config_fields: [
    field.string('containerDiskImage', 'Container disk image', 'quay.io/containerdisks/fedora:latest', { required: true, description: 'image that holds the boot disk (a containerDisk)' }),
    field.number('cpuCores', 'CPU cores', 1, { required: true }),
    field.string('memory', 'Memory', '2Gi', { required: true, description: 'guest memory, a Kubernetes quantity' }),
    field.select('runStrategy', 'Run strategy', ['Always', 'RerunOnFailure', 'Manual', 'Halted', 'Once'], 'Always', { description: 'whether KubeVirt keeps the VM running' }),
    field.textarea('cloudInitUserData', 'cloud-init user data', { description: 'a #cloud-config document given to the guest on first boot' }),
  ],
  template: `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  runStrategy: {{ .runStrategy }}
  template:
    metadata:
      labels:
        kubevirt.io/vm: {{ .name }}
    spec:
      domain:
        cpu:
          cores: {{ .cpuCores }}
        memory:
          guest: {{ .memory }}
        devices:
          disks:
            - name: rootdisk
              disk:
                bus: virtio
            {{- if .cloudInitUserData }}
            - name: cloudinitdisk
              disk:
                bus: virtio
            {{- end }}
          interfaces:
            - name: default
              masquerade: {}
      networks:
        - name: default
          pod: {}
      volumes:
        - name: rootdisk
          containerDisk:
            image: {{ .containerDiskImage }}
        {{- if .cloudInitUserData }}
        - name: cloudinitdisk
          cloudInitNoCloud:
            userData: {{ .cloudInitUserData }}
        {{- end }}
`,
}]

// Argo Workflows (argoproj.io).
import { field, type CatalogueEntry } from './types.ts'

export const workflow: CatalogueEntry[] = [{
  name: 'argo-workflow',
  display_name: 'Argo Workflow',
  description: 'Runs a container script to completion as an Argo Workflow, kept for a while after it finishes. Requires Argo Workflows (the workflow controller) with its executor allowed in the namespace; the service account needs the Argo executor role.',
  version: '1.0.0',
  category: 'workflow',
  icon: 'flow',
  crd: { group: 'argoproj.io', version: 'v1alpha1', kind: 'Workflow', plural: 'workflows' },
  config_fields: [
    field.string('image', 'Image', 'alpine:3.20', { required: true }),
    field.textarea('script', 'Script', { required: true, description: 'shell commands run with sh -c' }),
    field.string('serviceAccountName', 'Service account', undefined, { description: 'account the steps run as (the namespace default when empty)' }),
    field.number('ttlSecondsAfterCompletion', 'Keep for (seconds)', 86400, { description: 'how long the finished workflow is kept' }),
  ],
  template: `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  entrypoint: main
  {{- if .serviceAccountName }}
  serviceAccountName: {{ .serviceAccountName }}
  {{- end }}
  {{- if .ttlSecondsAfterCompletion }}
  ttlStrategy:
    secondsAfterCompletion: {{ .ttlSecondsAfterCompletion }}
  {{- end }}
  templates:
    - name: main
      container:
        name: main
        image: {{ .image }}
        command:
          - sh
          - -c
        args:
          - {{ .script }}
`,
}]

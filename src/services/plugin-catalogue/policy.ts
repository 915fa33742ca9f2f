// Kyverno (kyverno.io).
import { field, type CatalogueEntry } from './types.ts'

export const policy: CatalogueEntry[] = [{
  name: 'kyverno-require-label',
  display_name: 'Kyverno require-label policy',
  description: 'A namespaced Kyverno Policy that audits or refuses resources of a kind that lack a label. Requires Kyverno 1.13 or later (rule-level failureAction). Kyverno 1.17 deprecated kyverno.io/v1 policies in favour of the CEL-based policies.kyverno.io ValidatingPolicy; they are still served through 1.19.',
  version: '1.0.0',
  category: 'policy',
  icon: 'shield',
  crd: { group: 'kyverno.io', version: 'v1', kind: 'Policy', plural: 'policies' },
  config_fields: [
    field.string('requiredLabel', 'Required label', 'app.kubernetes.io/name', { required: true }),
    field.select('resourceKind', 'Resource kind', ['Pod', 'Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Service', 'ConfigMap'], 'Pod'),
    field.select('failureAction', 'On violation', ['Audit', 'Enforce'], 'Audit', { description: 'Audit reports, Enforce refuses the request' }),
    field.boolean('background', 'Scan existing resources', true),
  ],
  template: `apiVersion: kyverno.io/v1
kind: Policy
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  background: {{ .background }}
  rules:
    - name: require-label
      match:
        any:
          - resources:
              kinds:
                - {{ .resourceKind }}
      validate:
        failureAction: {{ .failureAction }}
        message: {{ printf "the label %s is required" .requiredLabel }}
        pattern:
          metadata:
            labels:
              {{ .requiredLabel }}: "?*"
`,
}]

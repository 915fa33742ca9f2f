// Argo CD (argoproj.io) applications and Tekton (tekton.dev) pipeline runs.
import { field, type CatalogueEntry } from './types.ts'

export const ciCd: CatalogueEntry[] = [{
  name: 'argo-cd-application',
  display_name: 'Argo CD Application',
  description: 'Keeps a namespace in sync with manifests from a Git repository path (plain YAML, Kustomize or Helm). Requires Argo CD; Applications live in Argo CD\'s namespace (usually argocd) unless apps-in-any-namespace is enabled, so deploy this node there.',
  version: '1.0.0',
  category: 'ci-cd',
  icon: 'git',
  crd: { group: 'argoproj.io', version: 'v1alpha1', kind: 'Application', plural: 'applications' },
  config_fields: [
    field.string('repoURL', 'Repository URL', undefined, { required: true }),
    field.string('path', 'Path', '.', { required: true, description: 'directory in the repository' }),
    field.string('targetRevision', 'Revision', 'HEAD', { required: true, description: 'branch, tag or commit' }),
    field.string('project', 'Argo CD project', 'default', { required: true }),
    field.string('destinationServer', 'Destination cluster', 'https://kubernetes.default.svc', { required: true, description: 'API server URL as Argo CD knows it' }),
    field.string('destinationNamespace', 'Destination namespace', undefined, { required: true }),
    field.boolean('autoSync', 'Sync automatically', true),
    field.boolean('prune', 'Prune', false, { description: 'delete resources removed from Git (with automatic sync)' }),
    field.boolean('selfHeal', 'Self-heal', false, { description: 'undo changes made in the cluster (with automatic sync)' }),
  ],
  template: `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  project: {{ .project }}
  source:
    repoURL: {{ .repoURL }}
    path: {{ .path }}
    targetRevision: {{ .targetRevision }}
  destination:
    server: {{ .destinationServer }}
    namespace: {{ .destinationNamespace }}
  syncPolicy:
    syncOptions:
      - CreateNamespace=true
    {{- if .autoSync }}
    automated:
      prune: {{ .prune }}
      selfHeal: {{ .selfHeal }}
    {{- end }}
`,
}, {
  name: 'tekton-pipeline-run',
  display_name: 'Tekton PipelineRun',
  description: 'Runs an existing Tekton Pipeline once, with a workspace on a new volume. Requires Tekton Pipelines 0.44 or later (tekton.dev/v1) and the Pipeline it names in the same namespace.',
  version: '1.0.0',
  category: 'ci-cd',
  icon: 'pipeline',
  crd: { group: 'tekton.dev', version: 'v1', kind: 'PipelineRun', plural: 'pipelineruns' },
  config_fields: [
    field.string('pipelineName', 'Pipeline', undefined, { required: true }),
    field.string('serviceAccountName', 'Service account', 'default', { required: true }),
    field.string('workspaceName', 'Workspace', 'shared-data', { required: true, description: 'workspace the pipeline declares' }),
    field.string('workspaceSize', 'Workspace size', '1Gi', { required: true }),
    field.string('timeout', 'Timeout', '1h0m0s', { required: true }),
  ],
  template: `apiVersion: tekton.dev/v1
kind: PipelineRun
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  pipelineRef:
    name: {{ .pipelineName }}
  taskRunTemplate:
    serviceAccountName: {{ .serviceAccountName }}
  timeouts:
    pipeline: {{ .timeout }}
  workspaces:
    - name: {{ .workspaceName }}
      volumeClaimTemplate:
        spec:
          accessModes:
            - ReadWriteOnce
          resources:
            requests:
              storage: {{ .workspaceSize }}
`,
}]

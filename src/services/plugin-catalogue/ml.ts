// KServe (serving.kserve.io).
import { field, type CatalogueEntry } from './types.ts'

export const ml: CatalogueEntry[] = [{
  name: 'kserve-inference-service',
  display_name: 'KServe InferenceService',
  description: 'Serves a trained model over HTTP (v1 and v2 inference protocols) from a storage URI, scaling between replica bounds. Requires KServe (with Knative Serving for serverless mode, or RawDeployment mode) and a serving runtime for the model format.',
  version: '1.0.0',
  category: 'ml',
  icon: 'brain',
  crd: { group: 'serving.kserve.io', version: 'v1beta1', kind: 'InferenceService', plural: 'inferenceservices' },
  config_fields: [
    field.select('modelFormat', 'Model format', ['sklearn', 'xgboost', 'lightgbm', 'tensorflow', 'pytorch', 'onnx', 'huggingface', 'triton'], 'sklearn'),
    field.string('storageUri', 'Model location', undefined, { required: true, description: 'e.g. gs://kfserving-examples/models/sklearn/1.0/model, s3://… or pvc://…' }),
    field.number('minReplicas', 'Minimum replicas', 1),
    field.number('maxReplicas', 'Maximum replicas', 3),
    field.string('runtime', 'Serving runtime', undefined, { description: 'a ServingRuntime name (chosen by model format when empty)' }),
  ],
  template: `apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  predictor:
    {{- if .minReplicas }}
    minReplicas: {{ .minReplicas }}
    {{- end }}
    {{- if .maxReplicas }}
    maxReplicas: {{ .maxReplicas }}
    {{- end }}
    model:
      modelFormat:
        name: {{ .modelFormat }}
      {{- if .runtime }}
      runtime: {{ .runtime }}
      {{- end }}
      storageUri: {{ .storageUri }}
`,
}]

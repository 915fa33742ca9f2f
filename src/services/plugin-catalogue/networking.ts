// Gateway API (gateway.networking.k8s.io) routes and Istio (networking.istio.io) virtual services.
import { field, type CatalogueEntry } from './types.ts'

export const networking: CatalogueEntry[] = [{
  name: 'gateway-api-httproute',
  display_name: 'Gateway API HTTPRoute',
  description: 'Routes HTTP requests for a host and path prefix from a Gateway to a Service. Requires the Gateway API CRDs (standard channel, v1) and a Gateway controller such as Istio, Envoy Gateway, Cilium or NGINX Gateway Fabric, with a Gateway to attach to.',
  version: '1.0.0',
  category: 'networking',
  icon: 'route',
  crd: { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'HTTPRoute', plural: 'httproutes' },
  config_fields: [
    field.string('gatewayName', 'Gateway', undefined, { required: true, description: 'name of the Gateway the route attaches to' }),
    field.string('gatewayNamespace', 'Gateway namespace', undefined, { description: 'namespace of the Gateway (the route\'s own when empty)' }),
    field.string('hostname', 'Host name', undefined, { description: 'host the route answers for (every host of the Gateway when empty)' }),
    field.string('pathPrefix', 'Path prefix', '/', { required: true }),
    field.string('backendService', 'Backend service', undefined, { required: true, description: 'Service that receives the traffic' }),
    field.number('backendPort', 'Backend port', 80, { required: true }),
  ],
  template: `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  parentRefs:
    - name: {{ .gatewayName }}
      {{- if .gatewayNamespace }}
      namespace: {{ .gatewayNamespace }}
      {{- end }}
  {{- if .hostname }}
  hostnames:
    - {{ .hostname }}
  {{- end }}
  rules:
    - matches:
        - path:
            type: PathPrefix
            value: {{ .pathPrefix }}
      backendRefs:
        - name: {{ .backendService }}
          port: {{ .backendPort }}
`,
}, {
  name: 'istio-virtual-service',
  display_name: 'Istio VirtualService',
  description: 'Routes traffic for a host to a destination service through the Istio mesh, with a request timeout and retries. Requires Istio (istiod) 1.22 or later, which serves networking.istio.io/v1; attach a Gateway to expose it outside the mesh.',
  version: '1.0.0',
  category: 'networking',
  icon: 'istio',
  crd: { group: 'networking.istio.io', version: 'v1', kind: 'VirtualService', plural: 'virtualservices' },
  config_fields: [
    field.string('host', 'Host', undefined, { required: true, description: 'host the clients address (a DNS name or a mesh service name)' }),
    field.string('gateway', 'Gateway', undefined, { description: 'Istio Gateway (namespace/name) to bind to; mesh-internal only when empty' }),
    field.string('destinationHost', 'Destination service', undefined, { required: true, description: 'service that receives the traffic' }),
    field.number('destinationPort', 'Destination port', 80, { required: true }),
    field.string('timeout', 'Timeout', '10s', { description: 'request timeout, a duration' }),
    field.number('retries', 'Retry attempts', 2),
  ],
  template: `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  hosts:
    - {{ .host }}
  {{- if .gateway }}
  gateways:
    - {{ .gateway }}
  {{- end }}
  http:
    - route:
        - destination:
            host: {{ .destinationHost }}
            port:
              number: {{ .destinationPort }}
      {{- if .timeout }}
      timeout: {{ .timeout }}
      {{- end }}
      {{- if .retries }}
      retries:
        attempts: {{ .retries }}
      {{- end }}
`,
}]

// cert-manager (cert-manager.io).
import { field, type CatalogueEntry } from './types.ts'

export const security: CatalogueEntry[] = [{
  name: 'cert-manager-certificate',
  display_name: 'cert-manager Certificate',
  description: 'A TLS certificate for a DNS name, issued and renewed into a Secret. Requires cert-manager 1.x and an Issuer or ClusterIssuer (for example Let\'s Encrypt over ACME).',
  version: '1.0.0',
  category: 'security',
  icon: 'certificate',
  crd: { group: 'cert-manager.io', version: 'v1', kind: 'Certificate', plural: 'certificates' },
  config_fields: [
    field.string('dnsName', 'DNS name', undefined, { required: true, description: 'the name the certificate is for' }),
    field.string('secretName', 'Secret name', undefined, { required: true, description: 'Secret the key pair is stored in (an Ingress or Gateway reads it)' }),
    field.string('issuerName', 'Issuer', 'letsencrypt', { required: true }),
    field.select('issuerKind', 'Issuer kind', ['ClusterIssuer', 'Issuer'], 'ClusterIssuer'),
    field.string('duration', 'Lifetime', '2160h', { description: 'requested validity, a Go duration' }),
    field.string('renewBefore', 'Renew before', '360h', { description: 'how long before expiry it is renewed' }),
    field.select('privateKeyAlgorithm', 'Key algorithm', ['ECDSA', 'RSA', 'Ed25519'], 'ECDSA'),
  ],
  template: `apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  secretName: {{ .secretName }}
  dnsNames:
    - {{ .dnsName }}
  issuerRef:
    name: {{ .issuerName }}
    kind: {{ .issuerKind }}
    group: cert-manager.io
  {{- if .duration }}
  duration: {{ .duration }}
  {{- end }}
  {{- if .renewBefore }}
  renewBefore: {{ .renewBefore }}
  {{- end }}
  privateKey:
    algorithm: {{ .privateKeyAlgorithm }}
    rotationPolicy: Always
`,
}]

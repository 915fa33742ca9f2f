// The credentials a cluster record holds, per auth type (API.md §5), and their normalisation: PEM data is
// accepted raw or base64 and kept as base64 (the form kubeconfig and client-node use).
import { BadRequest } from '../errors.ts'

export type AuthType = 'kubeconfig' | 'token' | 'certificate' | 'serviceaccount' | 'oidc'
export const AUTH_TYPES: readonly AuthType[] = ['kubeconfig', 'token', 'certificate', 'serviceaccount', 'oidc']

interface Common { insecure_skip_tls_verify?: boolean }
export type ClusterCredentials = Common & (
  | { auth_type: 'kubeconfig'; kubeconfig: string; context?: string }
  | { auth_type: 'token'; token: string; ca_data?: string }
  | { auth_type: 'certificate'; client_cert_data: string; client_key_data: string; ca_data?: string }
  | { auth_type: 'serviceaccount'; token: string; namespace: string; ca_data?: string }
  | { auth_type: 'oidc'; issuer_url: string; client_id: string; client_secret?: string; refresh_token: string; id_token?: string; ca_data?: string }
)

/** The names of the fields that hold secrets, for redaction and for tests that hunt for leaks. */
export const SECRET_FIELDS = ['kubeconfig', 'token', 'client_key_data', 'client_secret', 'refresh_token', 'id_token'] as const

/** PEM text or its base64 → base64 of the PEM; anything else is a 400 naming the field. */
export function pemToBase64(value: string, field: string): string {
  const text = value.trim()
  if (text.startsWith('-----BEGIN ')) return Buffer.from(text + '\n', 'utf8').toString('base64')
  const decoded = Buffer.from(text, 'base64').toString('utf8')
  if (/^[A-Za-z0-9+/=\s]+$/.test(text) && decoded.trimStart().startsWith('-----BEGIN ')) return Buffer.from(decoded, 'utf8').toString('base64')
  throw new BadRequest(`${field} must be PEM data, raw or base64-encoded`)
}

/** Checks that every field the auth type needs is present and non-empty, and normalises PEM fields. */
export function normaliseCredentials(input: ClusterCredentials): ClusterCredentials {
  const need = (field: string) => {
    const v = (input as unknown as Record<string, unknown>)[field]
    if (typeof v !== 'string' || v.trim() === '') throw new BadRequest(`credentials.${field} is required for auth_type ${input.auth_type}`)
  }
  const ca = (c: { ca_data?: string }) => (c.ca_data ? { ca_data: pemToBase64(c.ca_data, 'credentials.ca_data') } : {})
  switch (input.auth_type) {
    case 'kubeconfig': need('kubeconfig'); return input
    case 'token': need('token'); return { ...input, ...ca(input) }
    case 'serviceaccount': need('token'); need('namespace'); return { ...input, ...ca(input) }
    case 'certificate':
      need('client_cert_data'); need('client_key_data')
      return { ...input, client_cert_data: pemToBase64(input.client_cert_data, 'credentials.client_cert_data'), client_key_data: pemToBase64(input.client_key_data, 'credentials.client_key_data'), ...ca(input) }
    case 'oidc': need('issuer_url'); need('client_id'); need('refresh_token'); return { ...input, ...ca(input) }
    default: throw new BadRequest(`auth_type must be one of ${AUTH_TYPES.join(', ')}`)
  }
}

// Every text a build keeps or sends (log lines, errors, events) passes through this mask first. The known
// values (the registry login in every encoding it takes on the way to the pod) are masked by value; what a
// repository or builder may print on its own (credentials in URLs, Authorization headers, token query
// parameters) by shape, since its value is not known beforehand.
import { redactor, type Redact } from '../run-redaction.ts'

const MASK = '[redacted]'

const SHAPES: Array<[RegExp, string]> = [
  // scheme://user:password@host and scheme://token@host
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@:]+(?::[^/\s@]*)?@/gi, `$1${MASK}@`],
  // Authorization: Basic …, Bearer …, token … (a header echoed by git's GIT_TRACE or curl -v)
  [/\b(authorization\s*[:=]\s*)(?:basic|bearer|token)\s+[^\s"',;]+/gi, `$1${MASK}`],
  [/\b((?:basic|bearer)\s+)[A-Za-z0-9+/=._~-]{16,}/gi, `$1${MASK}`],
  // ?access_token=…, &password=…, …
  [/([?&;](?:access_token|token|password|passwd|secret|auth|sig|signature|x-amz-signature|client_secret)=)[^&\s"']+/gi, `$1${MASK}`],
]

export function maskShapes(text: string): string {
  let out = text
  for (const [pattern, replacement] of SHAPES) out = out.replace(pattern, replacement)
  return out
}

/** The login as the pod and its logs may show it: the secret, `user:secret` base64, the dockerconfigjson. */
export function loginForms(login: { username: string; secret: string } | null, configJson?: string): string[] {
  if (!login) return []
  const forms = [login.secret, `${login.username}:${login.secret}`]
  if (configJson) forms.push(configJson, Buffer.from(configJson, 'utf8').toString('base64'))
  return forms
}

/** The mask for one build: known values first (so a URL holding one is masked whole), then the shapes. */
export function buildMask(values: string[]): Redact {
  const byValue = redactor(values)
  return (text) => maskShapes(byValue(text))
}

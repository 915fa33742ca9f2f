// Kubernetes names from compose names: DNS labels, stable (no randomness), unique per kind. Collisions
// (my_app and my-app both become my-app) get a suffix derived from the original name, so the result never
// depends on the order names are allocated in.
import { createHash } from 'node:crypto'

/** Leaves room for suffixes (-env) and for a StatefulSet's pod names (<name>-<ordinal>, with hash labels). */
const MAX_BASE = 45

function digest(s: string): string {
  return createHash('sha256').update(s).digest('hex').slice(0, 6)
}

export function dnsLabel(name: string, max = MAX_BASE): string {
  let s = name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-+|-+$/g, '')
  if (s === '') s = 'x'
  if (!/^[a-z]/.test(s)) s = `c-${s}` // Service names must start with a letter (RFC 1035)
  if (s.length > max) s = `${s.slice(0, max - 7).replace(/-+$/, '')}-${digest(name)}`
  return s
}

/** Unique names within one kind; `original` is what the name came from (for the collision suffix). */
export class NameSpace {
  private readonly taken = new Set<string>()
  claim(wanted: string, original: string): string {
    let name = wanted
    if (this.taken.has(name)) name = `${wanted.slice(0, 56)}-${digest(original)}`
    for (let n = 2; this.taken.has(name); n++) name = `${wanted.slice(0, 50)}-${digest(original)}-${n}`
    this.taken.add(name)
    return name
  }
}

/** Names that suggest a credential: their values never leave the analysis. */
export const SENSITIVE_NAME = /(PASS|PWD|SECRET|TOKEN|KEY|CREDENTIAL|PRIVATE|AUTH|SALT|COOKIE|SESSION|CERT|DSN|SIGNATURE)/i
/** A URL with a password in it (scheme://user:password@host). */
export const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:[^/\s@]+@/i

export function isSensitiveName(name: string): boolean {
  return SENSITIVE_NAME.test(name)
}

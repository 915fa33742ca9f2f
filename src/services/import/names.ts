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
const SCHEME_CHAR = /[a-z0-9+.-]/i
const LETTER = /[a-z]/i
const AUTHORITY_END = /[/@\s]/

/**
 * Whether the text holds a URL with a password in it (scheme://user:password@host). A scan from each `://`,
 * not a regular expression: the pattern this replaces backtracked over every run of scheme characters
 * (quadratic: a 128 KB value held the event loop for seconds). Each character is looked at a bounded number
 * of times, since the spans scanned from two `://` never overlap (a scheme cannot hold ':' or '/').
 */
export function hasUrlPassword(text: string): boolean {
  for (let at = text.indexOf('://'); at >= 0; at = text.indexOf('://', at + 3)) {
    // A scheme ends right before "://": scheme characters back to one that starts it with a letter.
    let schemed = false
    for (let i = at - 1; i >= 0 && SCHEME_CHAR.test(text[i]); i--) if (LETTER.test(text[i])) { schemed = true; break }
    if (!schemed) continue
    // user:password@ : the authority up to the first '/', '@' or space must end in '@' and hold a ':' with a password after it.
    let colon = -1
    let i = at + 3
    for (; i < text.length && !AUTHORITY_END.test(text[i]); i++) if (colon < 0 && text[i] === ':') colon = i
    if (text[i] === '@' && colon >= 0 && colon < i - 1) return true
  }
  return false
}

export function isSensitiveName(name: string): boolean {
  return SENSITIVE_NAME.test(name)
}

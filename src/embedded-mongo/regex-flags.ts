// Regular expressions as they arrive from BSON need two adjustments before they are used for matching:
//  - js-bson turns the BSON option 's' (dot matches newline) into the JS flag 'g', which would make
//    RegExp.test() stateful (lastIndex) and skip every other match; for matching it becomes JS 's'.
//  - `$options: 'x'` (extended syntax) has no JS equivalent; the pattern is rewritten without its
//    unescaped whitespace and #-comments instead.
// Stored data is left alone so that values round-trip unchanged; only filters, pipelines and update
// conditions go through here. Unchanged inputs are returned as is (no copying in the common case).
import { isPlainObject } from './values.ts'

function forMatchingRegExp(r: RegExp): RegExp {
  if (!r.global) return r
  const flags = r.flags.replace('g', '')
  return new RegExp(r.source, flags.includes('s') ? flags : flags + 's')
}

/** Drops unescaped whitespace and `#` comments outside character classes, as PCRE's x option does. */
export function stripExtendedSyntax(pattern: string): string {
  let out = ''
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '\\') {
      out += c + (pattern[i + 1] ?? '')
      i++
    } else if (inClass) {
      if (c === ']') inClass = false
      out += c
    } else if (c === '[') {
      inClass = true
      out += c
    } else if (c === '#') {
      while (i < pattern.length && pattern[i] !== '\n') i++
    } else if (!/\s/.test(c)) {
      out += c
    }
  }
  return out
}

export function forMatching<T>(value: T): T {
  if (value instanceof RegExp) return forMatchingRegExp(value) as T
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined
    value.forEach((v, i) => {
      const next = forMatching(v)
      if (next !== v) (copy ??= value.slice())[i] = next
    })
    return (copy ?? value) as T
  }
  if (!isPlainObject(value)) return value
  let copy: Record<string, unknown> | undefined
  for (const [k, v] of Object.entries(value)) {
    const next = forMatching(v)
    if (next !== v) (copy ??= { ...value })[k] = next
  }
  const obj = copy ?? value
  const options = obj.$options
  if (typeof options === 'string' && options.includes('x')) {
    const source = obj.$regex instanceof RegExp ? obj.$regex.source : obj.$regex
    if (typeof source === 'string') {
      return { ...obj, $regex: stripExtendedSyntax(source), $options: options.replace(/x/g, '') } as T
    }
  }
  return obj as T
}

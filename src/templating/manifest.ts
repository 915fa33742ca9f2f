// YAML-safe rendering: every printed action is replaced by an unguessable placeholder token, the output
// is parsed as YAML, and only then are the values put into the parsed scalars. A value can therefore
// never add keys, items or documents: whatever it contains, it lands inside one scalar.
import { randomBytes } from 'node:crypto'
import YAML, { isMap, isScalar, type Document, type Node as YamlNode } from 'yaml'
import { ManifestTemplateError } from './errors.ts'
import type { RenderLimits } from './exec.ts'
import { NO_SYNTAX } from './functions.ts'
import type { ParsedTemplate } from './index.ts'
import { toPlain, type GoValue } from './values.ts'

interface Inserted {
  value: GoValue
  text: string
  /** The value behind toYaml/toJson/quote output (kept through indent/nindent): it replaces a whole node. */
  syntax: GoValue | typeof NO_SYNTAX
}

const MAX_ALIASES = 100
/** Flow collections (`[` `{`) nest this deep at most: the YAML parser recurses per level, so a range
 * printing `[` ten thousand times would take it seconds and then overflow the stack. */
export const MAX_FLOW_DEPTH = 100

/** An upper bound of the flow nesting: brackets in quoted or block text count too, which only a
 * template with a hundred unbalanced brackets in its own text would notice. */
function flowDepth(text: string): number {
  let depth = 0
  let max = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth)
    else if ((c === 0x5d || c === 0x7d) && depth > 0) depth--
  }
  return max
}

function nonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.trim().length > 0
}

export function renderManifest(template: ParsedTemplate, data: Record<string, unknown>, limits: RenderLimits): Record<string, unknown>[] {
  const nonce = randomBytes(9).toString('hex')
  const prefix = `tplv${nonce}n`
  const tokenRe = new RegExp(`${prefix}(\\d+)z`, 'g')
  const exactRe = new RegExp(`^${prefix}(\\d+)z$`)
  const inserted: Inserted[] = []

  const output = template.run(data, limits, (value, text, syntax) => {
    const token = `${prefix}${inserted.length}z`
    inserted.push({ value, text, syntax })
    // toYaml … | nindent N keeps its leading line break and indentation, so the node lands where Helm's would.
    const lead = syntax !== NO_SYNTAX ? /^[\n ]*/.exec(text)![0] : ''
    return lead + token
  })

  if (flowDepth(output) > MAX_FLOW_DEPTH) throw new ManifestTemplateError(`the rendered manifest nests [ ] or { } deeper than ${MAX_FLOW_DEPTH} levels`)
  const docs = YAML.parseAllDocuments(output, { uniqueKeys: true, strict: true })
  if (!Array.isArray(docs)) throw new ManifestTemplateError('the rendered manifest is not YAML')
  const objects: Record<string, unknown>[] = []
  docs.forEach((doc, index) => {
    if (doc.errors.length > 0) throw new ManifestTemplateError(`the rendered manifest is not valid YAML: ${doc.errors[0].message}`, index)
    substitute(doc, inserted, tokenRe, exactRe)
    if (doc.contents === null) return
    let js: unknown
    try {
      js = doc.toJS({ maxAliasCount: MAX_ALIASES })
    } catch (e) {
      throw new ManifestTemplateError(`the rendered manifest is not usable YAML: ${(e as Error).message}`, index)
    }
    if (js === null || js === undefined) return
    if (typeof js !== 'object' || Array.isArray(js)) throw new ManifestTemplateError(`document ${index + 1} is not a mapping`, index)
    const obj = js as Record<string, unknown>
    if (!nonEmptyString(obj.apiVersion)) throw new ManifestTemplateError(`document ${index + 1} has no apiVersion`, index)
    if (!nonEmptyString(obj.kind)) throw new ManifestTemplateError(`document ${index + 1} has no kind`, index)
    const metadata = obj.metadata
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata) || !nonEmptyString((metadata as Record<string, unknown>).name)) {
      throw new ManifestTemplateError(`document ${index + 1} (${obj.kind}) has no metadata.name`, index)
    }
    objects.push(obj)
  })
  return objects
}

function substitute(doc: Document.Parsed, inserted: Inserted[], tokenRe: RegExp, exactRe: RegExp): void {
  const entry = (i: string): Inserted => inserted[Number(i)]
  YAML.visit(doc, {
    Scalar(key, node) {
      if (typeof node.value !== 'string') return
      const src = node.value
      tokenRe.lastIndex = 0
      if (!tokenRe.test(src)) return
      const isKey = key === 'key'
      const plain = node.type === 'PLAIN' || node.type === undefined
      const exact = exactRe.exec(src)
      if (exact !== null && !isKey && plain) {
        const e = entry(exact[1])
        // The template asked for a typed node (toYaml/toJson/quote), or the scalar is the value itself and
        // the value is a number or a boolean: the value's own type. Any other value is its text, a string:
        // "3", "true", "null" or "" from a string field must not turn into a number, a boolean or null.
        let replacement: unknown
        if (e.syntax !== NO_SYNTAX) replacement = toPlain(e.syntax)
        else if (typeof e.value === 'bigint' || typeof e.value === 'number' || typeof e.value === 'boolean') replacement = toPlain(e.value)
        else replacement = e.text
        const created = doc.createNode(replacement) as YamlNode
        if (node.anchor) created.anchor = node.anchor
        return created
      }
      // Text and values, or several values, concatenate into a string, whatever the joined text would
      // mean as YAML ("" + "-" + "0" is the string "-0", not the number).
      node.value = src.replace(tokenRe, (_, i: string) => entry(i).text)
      return undefined
    },
  })
  // Two placeholders can turn into the same key only after substitution: refuse, as a parser would.
  YAML.visit(doc, {
    Map(_, map) {
      if (!isMap(map)) return
      const seen = new Set<unknown>()
      for (const pair of map.items) {
        const k = isScalar(pair.key) ? pair.key.value : pair.key
        // The key is not quoted back: it may be an inserted (secret) value.
        if (seen.has(k)) throw new ManifestTemplateError('the rendered manifest has a duplicate key once values are inserted')
        seen.add(k)
      }
    },
  })
}

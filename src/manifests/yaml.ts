// Multi-document YAML for `kubectl apply -f -`: diagnostics as leading comments, then one document per
// object in apply order. Strings are emitted with the YAML 1.1 rules kubectl's parser uses, so a value
// like "yes" or "0755" stays a string there too.
import { stringify } from 'yaml'
import type { Diagnostic, RenderResult } from './types.ts'

// Every character YAML 1.1 or 1.2 treats as a line break, and other control characters: none may end a
// comment early and turn the rest of a message into YAML.
const BREAKS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g

export function commentLine(d: Diagnostic): string {
  return `# ${d.severity} in node ${JSON.stringify(d.node_id)}: ${d.message}`.replace(BREAKS, ' ')
}

export function toYaml(result: RenderResult, header?: string): string {
  const lines = [
    ...(header ? header.split('\n').map((h) => `# ${h}`.replace(BREAKS, ' ')) : []),
    ...result.diagnostics.map(commentLine),
  ]
  const head = lines.length > 0 ? `${lines.join('\n')}\n` : ''
  const docs = result.objects.map(({ object }) => `---\n${stringify(object, { version: '1.1', lineWidth: 0, aliasDuplicateObjects: false })}`)
  return head + docs.join('')
}

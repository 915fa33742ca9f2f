/** A template failed to parse or to execute; `line`/`column` (1-based) locate the construct in the template source. */
export class TemplateError extends Error {
  readonly line: number
  readonly column: number
  readonly templateName: string
  readonly detail: string
  constructor(templateName: string, line: number, column: number, detail: string) {
    super(`${templateName}: line ${line}, column ${column}: ${detail}`)
    this.name = 'TemplateError'
    this.templateName = templateName
    this.line = line
    this.column = column
    this.detail = detail
  }
}

/** The rendered manifest is not usable YAML, or one of its documents is not a Kubernetes object. */
export class ManifestTemplateError extends Error {
  /** 0-based index of the offending document among the rendered ones, when one document is at fault. */
  readonly documentIndex: number | null
  constructor(message: string, documentIndex: number | null = null) {
    super(message)
    this.name = 'ManifestTemplateError'
    this.documentIndex = documentIndex
  }
}

/** Maps a UTF-16 offset in `source` to a 1-based line and column (columns count code points). */
export function lineColumn(source: string, offset: number): { line: number; column: number } {
  let line = 1
  let lineStart = 0
  for (let i = source.indexOf('\n'); i !== -1 && i < offset; i = source.indexOf('\n', i + 1)) {
    line++
    lineStart = i + 1
  }
  let column = 1
  for (let i = lineStart; i < offset && i < source.length; i++) {
    const c = source.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < offset) i++
    column++
  }
  return { line, column }
}

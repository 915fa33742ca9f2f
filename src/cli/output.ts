// --output json|yaml|table. JSON and YAML print the API's answer whole; a table picks the columns a person
// reads first. Streams print one line per event (JSON lines with -o json).
import YAML from 'yaml'
import { CliError } from './errors.ts'

export const FORMATS = ['table', 'json', 'yaml'] as const
export type Format = typeof FORMATS[number]

export function parseFormat(value: string): Format {
  if ((FORMATS as readonly string[]).includes(value)) return value as Format
  throw new CliError(`--output must be one of ${FORMATS.join(', ')}, not ${JSON.stringify(value)}`, 2)
}

export interface Column<T> { header: string; value: (row: T) => unknown }

/** A cell: text on one line, empty for null or undefined, JSON for objects. */
function cell(v: unknown): string {
  if (v === null || v === undefined) return ''
  const text = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v)
  return text.replace(/[\r\n\t]+/g, ' ')
}

/** Left-aligned columns, two spaces apart, headers in capitals (kubectl's look). */
export function table<T>(rows: readonly T[], columns: ReadonlyArray<Column<T>>): string {
  const cells = [columns.map((c) => c.header.toUpperCase()), ...rows.map((r) => columns.map((c) => cell(c.value(r))))]
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i].length)))
  return cells.map((row) => row.map((text, i) => (i === row.length - 1 ? text : text.padEnd(widths[i]))).join('  ').trimEnd()).join('\n') + '\n'
}

/**
 * The text for `value` in `format`. `asTable` renders the table form (rows and columns, or text); without
 * it a table falls back to YAML, which reads well for one object.
 */
export function render(value: unknown, format: Format, asTable?: () => string): string {
  if (format === 'json') return JSON.stringify(value, null, 2) + '\n'
  if (format === 'yaml' || !asTable) return YAML.stringify(value)
  return asTable()
}

// A run's log: redacted, one line each, bounded in count and length so a huge workflow or a chatty failure
// cannot grow the run record without end. The first lines and the last are kept; the middle is counted.
import type { Redact } from './run-redaction.ts'

export const MAX_LOG_LINES = 500
export const MAX_LINE_LENGTH = 1000

export class RunLog {
  private readonly head: string[] = []
  private readonly tail: string[] = []
  private dropped = 0

  constructor(readonly redact: Redact, private readonly maxLines = MAX_LOG_LINES, private readonly maxLength = MAX_LINE_LENGTH) {}

  add(line: string): void {
    let text = this.redact(String(line)).replace(/[\r\n]+/g, ' ')
    if (text.length > this.maxLength) text = `${text.slice(0, this.maxLength - 1)}…`
    const stamped = `${new Date().toISOString()} ${text}`
    const headRoom = Math.ceil(this.maxLines / 2)
    if (this.head.length < headRoom) { this.head.push(stamped); return }
    this.tail.push(stamped)
    if (this.tail.length > this.maxLines - headRoom - 1) { this.tail.shift(); this.dropped++ }
  }

  lines(): string[] {
    return this.dropped ? [...this.head, `… ${this.dropped} lines left out …`, ...this.tail] : [...this.head, ...this.tail]
  }
}

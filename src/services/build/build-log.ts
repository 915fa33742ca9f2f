// A build's kept log: masked lines with their phase and time, bounded in lines and bytes so a chatty build
// cannot grow its record without end. The first half and the latest lines are kept (the start says what
// ran, the end why it failed); the middle is counted and the build says `logs_truncated`.
import type { BuildPhase } from './progress.ts'

export interface BuildLogLine { phase: BuildPhase; line: string; timestamp: string }

export class BuildLog {
  private readonly head: BuildLogLine[] = []
  private tail: BuildLogLine[] = []
  private headBytes = 0
  private tailBytes = 0
  private dropped = 0

  constructor(private readonly maxLines: number, private readonly maxBytes: number, initial: BuildLogLine[] = [], initiallyTruncated = false) {
    for (const l of initial) this.add(l)
    if (initiallyTruncated && !this.dropped) this.dropped = 1
  }

  get truncated(): boolean { return this.dropped > 0 }
  get count(): number { return this.head.length + this.tail.length }

  add(entry: BuildLogLine): void {
    const size = Buffer.byteLength(entry.line) + 40
    const headLines = Math.ceil(this.maxLines / 2)
    if (!this.dropped && !this.tail.length && this.head.length < headLines && this.headBytes + size <= this.maxBytes / 2) {
      this.head.push(entry)
      this.headBytes += size
      return
    }
    this.tail.push(entry)
    this.tailBytes += size
    while (this.tail.length && (this.head.length + this.tail.length > this.maxLines || this.headBytes + this.tailBytes > this.maxBytes)) {
      const gone = this.tail.shift()!
      this.tailBytes -= Buffer.byteLength(gone.line) + 40
      this.dropped++
    }
  }

  lines(): BuildLogLine[] {
    if (!this.dropped) return [...this.head, ...this.tail]
    const at = this.tail[0]?.timestamp ?? this.head[this.head.length - 1]?.timestamp ?? new Date().toISOString()
    const phase = this.tail[0]?.phase ?? this.head[this.head.length - 1]?.phase ?? 'clone'
    return [...this.head, { phase, line: `… ${this.dropped} log lines left out (BUILD_LOG_MAX_LINES / BUILD_LOG_MAX_BYTES) …`, timestamp: at }, ...this.tail]
  }
}

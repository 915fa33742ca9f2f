// What a container that really runs writes, line by line with the time each line was written, so the
// logs API serves it like the kubelet serves a container's log file (and `follow` sees lines as they come).

export interface OutputLine { ts: number; text: string }

export class ContainerOutput {
  readonly lines: OutputLine[] = []
  private partial = ''
  private closed = false
  private readonly listeners = new Set<() => void>()

  get ended(): boolean { return this.closed }

  write(chunk: string): void {
    if (this.closed) return
    const parts = (this.partial + chunk).split('\n')
    this.partial = parts.pop() ?? ''
    const now = Date.now()
    for (const p of parts) this.lines.push({ ts: now, text: p.replace(/\r$/, '') })
    if (parts.length) this.notify()
  }

  line(text: string): void { this.write(`${text}\n`) }

  end(): void {
    if (this.closed) return
    if (this.partial) this.lines.push({ ts: Date.now(), text: this.partial })
    this.partial = ''
    this.closed = true
    this.notify()
  }

  /** Calls `fn` after every new line and at the end; returns the unsubscribe function. */
  subscribe(fn: () => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  private notify(): void { for (const fn of [...this.listeners]) fn() }
}

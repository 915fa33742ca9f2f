// JSON text already made, to be sent as is: a large value (an import's analysis) is serialized once, on a
// worker thread, and then stored, streamed and answered as that text, so the event loop never walks it.
// Where a generic JSON.stringify meets one anyway, toJSON gives the value it stands for (correct, only slower).

export class RawJson {
  /** `text` must be JSON as JSON.stringify makes it (one line: no raw CR or LF). */
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text)
  }

  /** `{"<key>":<this>}`: an object holding this value, without parsing it. */
  wrappedIn(key: string): RawJson {
    return new RawJson(`{${JSON.stringify(key)}:${this.text}}`)
  }
}

/** `value` as JSON text, with `raw`'s fields (RawJson values) spliced in as they are; `value` must be a plain object. */
export function jsonWith(value: Record<string, unknown>, raw: Record<string, RawJson>): string {
  const head = JSON.stringify(value)
  const extra = Object.entries(raw).map(([k, v]) => `${JSON.stringify(k)}:${v.text}`).join(',')
  if (!extra) return head
  return head === '{}' ? `{${extra}}` : `${head.slice(0, -1)},${extra}}`
}

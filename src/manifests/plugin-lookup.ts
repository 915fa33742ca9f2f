// A render asks for a plugin once per node that uses it; a canvas with twenty nodes of one plugin should still
// cost one database read. The lookup is kept for one render only, so an edited plugin is seen by the next.
export function oncePerRender<T>(lookup: (ref: string) => Promise<T>): (ref: string) => Promise<T> {
  const seen = new Map<string, Promise<T>>()
  return (ref) => {
    let found = seen.get(ref)
    if (!found) { found = lookup(ref); seen.set(ref, found) }
    return found
  }
}

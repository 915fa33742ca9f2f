// Kubernetes resource quantities ("250m", "1.5", "512Mi", "2G", "1e3") as plain numbers: CPU in cores,
// memory and storage in bytes.
const SUFFIX: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
}
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/

/** The quantity's value; NaN when it is not a quantity. */
export function parseQuantity(text: string | undefined): number {
  const m = QUANTITY.exec((text ?? '').trim())
  if (!m) return Number.NaN
  return Number(m[1]) * SUFFIX[m[2] ?? '']
}

// Medians of benchmark rounds: one noisy round on a shared machine must not move the reported figure.
export interface Sample { rps: number; p50: number; p99: number; cpuMicros: number }

function mid(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const m = sorted.length >> 1
  return sorted.length % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2
}

/** Each figure's median over the rounds, taken separately. */
export function median(samples: Sample[]): Sample {
  return { rps: mid(samples.map((s) => s.rps)), p50: mid(samples.map((s) => s.p50)), p99: mid(samples.map((s) => s.p99)), cpuMicros: mid(samples.map((s) => s.cpuMicros)) }
}

// Bounds how many objects are applied at once per cluster, across every run going to it, so many runs
// (or one big workflow) cannot flood an API server.
export type Schedule = <T>(task: () => Promise<T>) => Promise<T>

export function limiter(concurrency: number): Schedule & { readonly active: number; readonly waiting: number } {
  let active = 0
  const queue: Array<() => void> = []
  // A finishing task hands its slot straight to the next waiter, so a newcomer cannot take it in between.
  const release = () => {
    const next = queue.shift()
    if (next) next()
    else active--
  }
  const schedule = async <T>(task: () => Promise<T>): Promise<T> => {
    if (active >= concurrency) await new Promise<void>((resolve) => queue.push(resolve))
    else active++
    try {
      return await task()
    } finally {
      release()
    }
  }
  return Object.defineProperties(schedule, {
    active: { get: () => active },
    waiting: { get: () => queue.length },
  }) as Schedule & { readonly active: number; readonly waiting: number }
}

/** One limiter per cluster id, dropped when idle so removed clusters leave nothing behind. */
export class ClusterLimiters {
  private readonly byCluster = new Map<string, ReturnType<typeof limiter>>()
  constructor(private readonly concurrency: number) {}

  for(clusterId: string): Schedule {
    return async <T>(task: () => Promise<T>): Promise<T> => {
      let l = this.byCluster.get(clusterId)
      if (!l) { l = limiter(this.concurrency); this.byCluster.set(clusterId, l) }
      try {
        return await l(task)
      } finally {
        if (l.active === 0 && l.waiting === 0 && this.byCluster.get(clusterId) === l) this.byCluster.delete(clusterId)
      }
    }
  }
}

// Awaiting a bus event in a test, bounded: the next `event` matching `pred`, or a rejection naming `what`.
import type { BusEvents } from '../../src/events/bus.ts'

interface HasBus { bus: { next<E extends keyof BusEvents>(event: E, pred: (e: BusEvents[E]) => boolean): Promise<BusEvents[E]> } }

export function nextBusEvent<E extends keyof BusEvents>(app: HasBus, event: E, what: string, pred: (e: BusEvents[E]) => boolean, ms = 20_000): Promise<BusEvents[E]> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    app.bus.next(event, pred).finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms) }),
  ])
}

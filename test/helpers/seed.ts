// One seed for every property-based test, so CI runs the same cases every time and a failure replays.
// FC_SEED picks another seed (an integer, or `random` for a fresh one, printed); FC_RUNS_FACTOR
// multiplies each property's run count (npm run test:explore sets both). Importing this module sets
// fast-check's global seed, so every fc.assert / fc.check / fc.sample in the file uses it unless the
// call names its own.
import fc from 'fast-check'
import t from 'tap'
import { randomInt } from 'node:crypto'

/** The seed CI uses when FC_SEED is not set: never the clock. */
export const DEFAULT_SEED = 20_261_123

function parseSeed(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return DEFAULT_SEED
  if (raw.trim() === 'random') return randomInt(0, 2 ** 31 - 1)
  const seed = Number(raw)
  if (!Number.isSafeInteger(seed)) throw new Error(`FC_SEED must be an integer or "random", not ${JSON.stringify(raw)}`)
  return seed
}

function parseFactor(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 1
  const factor = Number(raw)
  if (!(factor > 0 && factor <= 1000)) throw new Error(`FC_RUNS_FACTOR must be a number in (0, 1000], not ${JSON.stringify(raw)}`)
  return factor
}

export const SEED = parseSeed(process.env.FC_SEED)
export const RUNS_FACTOR = parseFactor(process.env.FC_RUNS_FACTOR)

/** A property's run count, scaled for exploration runs (at least one). */
export function runs(n: number): number {
  return Math.max(1, Math.round(n * RUNS_FACTOR))
}

fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: SEED })
t.comment(`fast-check seed ${SEED}${RUNS_FACTOR === 1 ? '' : `, runs ×${RUNS_FACTOR}`} (replay with FC_SEED=${SEED})`)

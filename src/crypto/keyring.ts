// The key ring from the environment: ENCRYPTION_KEY seals, ENCRYPTION_KEYS_OLD (comma-separated) still open.
import { randomBytes } from 'node:crypto'
import type { Config } from '../config.ts'
import { resolveSecret } from '../dev-secrets.ts'
import { parseKey, type KeyRing } from './sealer.ts'

interface Warner { warn(obj: object, msg: string): void }

export async function loadKeyRing(config: Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_OLD' | 'NODE_ENV' | 'DATA_DIR'>, log: Warner): Promise<KeyRing> {
  const current = await resolveSecret({
    variable: 'ENCRYPTION_KEY', value: config.ENCRYPTION_KEY, nodeEnv: config.NODE_ENV, dataDir: config.DATA_DIR, file: 'encryption-key',
    generate: () => randomBytes(32).toString('base64'),
    isValid: (v) => Buffer.from(v, 'base64').length === 32,
  }, log)
  const old = (config.ENCRYPTION_KEYS_OLD ?? '').split(',').map((k) => k.trim()).filter(Boolean)
  return { current: parseKey(current, 'ENCRYPTION_KEY'), old: old.map((k, i) => parseKey(k, `ENCRYPTION_KEYS_OLD[${i}]`)) }
}

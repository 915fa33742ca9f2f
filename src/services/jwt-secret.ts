// Where the HS256 signing key comes from (src/dev-secrets.ts does the work). JWT_SECRET always wins.
// Production refuses to start without it (src/services/auth-config.ts checks at configuration time).
// Development generates one and keeps it in DATA_DIR/jwt-secret (mode 0600) so tokens survive restarts,
// with a warning. Tests without JWT_SECRET get a random in-memory key.
import { randomBytes } from 'node:crypto'
import type { Config } from '../config.ts'
import { resolveSecret } from '../dev-secrets.ts'

interface Warner { warn(obj: object, msg: string): void }

export const DEV_SECRET_FILE = 'jwt-secret'

export async function resolveJwtSecret(config: Pick<Config, 'JWT_SECRET' | 'NODE_ENV' | 'DATA_DIR'>, log: Warner): Promise<string> {
  return resolveSecret({
    variable: 'JWT_SECRET',
    value: config.JWT_SECRET,
    nodeEnv: config.NODE_ENV,
    dataDir: config.DATA_DIR,
    file: DEV_SECRET_FILE,
    generate: () => randomBytes(48).toString('base64url'),
    isValid: (value) => value.length >= 32,
  }, log)
}

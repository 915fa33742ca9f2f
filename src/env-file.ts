// `.env` in the working directory, when there is one (docs/configuration.md and .env.example say to copy it there).
// Variables already in the environment win over the file, so an operator's explicit setting always counts.
import { loadEnvFile } from 'node:process'

export function loadDotEnv(path = '.env'): boolean {
  try {
    loadEnvFile(path)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw new Error(`could not read ${path}: ${(err as Error).message}`)
  }
}

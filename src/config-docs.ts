// Human-facing lists of the configuration variables, rendered from the schema: .env.example and the
// README's configuration table.
import { ConfigSchema } from './config.ts'

interface VarDoc { name: string; default: string; description: string }

export function configVariables(): VarDoc[] {
  return Object.entries(ConfigSchema.properties).map(([name, schema]) => {
    const s = schema as { default?: unknown; description?: string }
    return { name, default: s.default === undefined ? '' : String(s.default), description: s.description ?? '' }
  })
}

export function renderEnvExample(): string {
  const lines = ['# Every variable the service reads, with its default. Copy to .env or set in the environment.', '']
  for (const v of configVariables()) {
    lines.push(`# ${v.description}`)
    lines.push(v.default === '' ? `# ${v.name}=` : `${v.name}=${v.default}`)
  }
  return lines.join('\n') + '\n'
}

// Runs a TypeScript entry point (the server, a CLI) in a child process under tsx until it exits, with only
// the environment given (plus PATH), and returns what it printed: for start-up refusals, which must be one
// line on stderr and an exit code.
import { spawn } from 'node:child_process'
import { once } from 'node:events'

const tsx = import.meta.resolve('tsx')

export interface Exited { code: number | null; stdout: string; stderr: string }

export async function runToExit(args: string[], env: Record<string, string>, cwd: string): Promise<Exited> {
  const child = spawn(process.execPath, ['--import', tsx, ...args], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => { stdout += d })
  child.stderr.on('data', (d) => { stderr += d })
  const [code] = await once(child, 'exit')
  return { code, stdout, stderr }
}

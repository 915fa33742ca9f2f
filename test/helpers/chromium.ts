// Headless Chromium (Debian's `chromium`) for the tests that check what a browser does: its connection
// limits, TLS, Swagger UI rendering. Tests skip with a reason when it is not installed.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export function chromiumPath(): string | undefined {
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim()
    if (found) return found
  }
  return undefined
}

function baseArgs(profile: string): string[] {
  // --no-sandbox: tests run as root on CI machines, where Chromium's sandbox refuses to start.
  return ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions', '--disable-dev-shm-usage', `--user-data-dir=${profile}`]
}

/** Starts Chromium on `url`; the caller awaits what the page reports and then calls stop(). */
export function openPage(binary: string, url: string, extraArgs: string[] = []): { process: ChildProcess; stop(): Promise<void> } {
  const profile = mkdtempSync(join(tmpdir(), 'cwo-chromium-'))
  const child = spawn(binary, [...baseArgs(profile), ...extraArgs, url], { stdio: 'ignore' })
  const exited = new Promise<void>((resolve) => { child.once('exit', () => resolve()); child.once('error', () => resolve()) })
  return {
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

/** The DOM Chromium serialises once the page has loaded and gone quiet (`--virtual-time-budget` lets its scripts run). */
export function dumpDom(binary: string, url: string, extraArgs: string[] = []): Promise<string> {
  const profile = mkdtempSync(join(tmpdir(), 'cwo-chromium-'))
  return new Promise((resolve, reject) => {
    execFile(binary, [...baseArgs(profile), '--virtual-time-budget=20000', ...extraArgs, '--dump-dom', url], { timeout: 90_000, maxBuffer: 64 << 20 }, (err, stdout) => {
      rmSync(profile, { recursive: true, force: true })
      if (err && !stdout) reject(err)
      else resolve(stdout)
    })
  })
}

#!/usr/bin/env node
// The `cwo` executable (package.json "bin"): the process's streams, Ctrl-C as an abort, the exit code.
import { runCli } from './program.ts'

const controller = new AbortController()
let interrupts = 0
process.on('SIGINT', () => {
  // The first Ctrl-C stops what is followed and exits 130; a second one does not wait for that.
  if (++interrupts > 1) process.exit(130)
  controller.abort()
})
process.stdout.on('error', (err: NodeJS.ErrnoException) => { if (err.code === 'EPIPE') process.exit(0) })

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd(),
  signal: controller.signal, isTTY: Boolean(process.stdout.isTTY),
})

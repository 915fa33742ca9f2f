// npm run build [-- <outDir>] [--no-check]: compiles src, plugins, schemas and scripts to JavaScript
// (default dist/) and copies the files the compiled code reads at run time, so `node <outDir>/src/server.js`
// and `node <outDir>/scripts/rotate-keys.js` run without tsx. --no-check skips type checking (emit only),
// for when `npm run typecheck` runs anyway.
import { execFileSync } from 'node:child_process'
import { cpSync } from 'node:fs'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const args = process.argv.slice(2)
const noCheck = args.includes('--no-check')
const outDir = resolve(args.find((a) => !a.startsWith('--')) ?? 'dist')
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

try {
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', outDir, ...(noCheck ? ['--noCheck'] : [])], { cwd: root, stdio: 'inherit' })
} catch {
  process.stderr.write('build failed: the compiler reported errors (above)\n')
  process.exit(1)
}
// Read relative to the compiled modules: src/app-info.ts reads ../package.json, the landing page its views.
cpSync(resolve(root, 'package.json'), resolve(outDir, 'package.json'))
cpSync(resolve(root, 'src/views'), resolve(outDir, 'src/views'), { recursive: true })
process.stdout.write(`built into ${outDir}\n`)

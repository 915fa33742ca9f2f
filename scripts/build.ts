// npm run build [-- <outDir>] [--no-check]: compiles src, plugins, schemas and scripts to JavaScript
// (default dist/) and copies the files the compiled code reads at run time, so `node <outDir>/src/server.js`
// and `node <outDir>/scripts/rotate-keys.js` run without tsx. --no-check skips type checking (emit only),
// for when `npm run typecheck` runs anyway.
// After compiling, every relative module specifier of the output is checked to name a file that is there:
// the build fails rather than ship a server that cannot load a module (ERR_MODULE_NOT_FOUND on its first run).
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { rewriteTypeScriptSpecifiers } from './emitted-specifiers.ts'

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

const emitted = readdirSync(outDir, { recursive: true, encoding: 'utf8' }).filter((f) => /\.[mc]?js$/.test(f)).map((f) => join(outDir, f))
const unresolved: string[] = []
let rewrittenCount = 0
for (const file of emitted) {
  const { code, specifiers, rewritten } = rewriteTypeScriptSpecifiers(readFileSync(file, 'utf8'), file)
  if (rewritten) {
    writeFileSync(file, code)
    rewrittenCount += rewritten
  }
  for (const s of specifiers) {
    if ((s.text.startsWith('./') || s.text.startsWith('../')) && !existsSync(resolve(dirname(file), s.text))) unresolved.push(`${relative(outDir, file)}: ${s.kind} '${s.text}'`)
  }
}
if (unresolved.length) {
  process.stderr.write(`build failed: ${unresolved.length} module specifiers of the output name no file in it:\n${unresolved.map((u) => `  ${u}\n`).join('')}`)
  process.exit(1)
}
process.stdout.write(`built into ${outDir} (${emitted.length} modules${rewrittenCount ? `; ${rewrittenCount} specifiers the compiler left naming .ts rewritten to .js` : ''})\n`)

// The module specifiers of emitted JavaScript, found by TypeScript's own parser (not a pattern over the text,
// which a comment or a string would fool). The build uses it to finish what `rewriteRelativeImportExtensions`
// leaves undone: the compiler skips some dynamic imports of a TypeScript path (plugins/services.ts' lazy
// apply engine was one), and Node cannot load a `.ts` path from compiled code.
import ts from 'typescript'

export interface Specifier {
  text: string
  /** Offsets of the text inside its quotes, in the file. */
  start: number
  end: number
  kind: 'import' | 'export' | 'dynamic import'
}

/** Every string-literal specifier of a static import, an `export … from`, and an `import()` call. */
export function moduleSpecifiers(code: string, fileName = 'module.js'): Specifier[] {
  const source = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS)
  const out: Specifier[] = []
  const add = (literal: ts.Node | undefined, kind: Specifier['kind']) => {
    if (!literal || !ts.isStringLiteralLike(literal)) return
    // getStart skips leading trivia; +1 and -1 step inside the quotes.
    out.push({ text: literal.text, start: literal.getStart(source) + 1, end: literal.getEnd() - 1, kind })
  }
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node.moduleSpecifier, 'import')
    else if (ts.isExportDeclaration(node)) add(node.moduleSpecifier, 'export')
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0], 'dynamic import')
    ts.forEachChild(node, visit)
  }
  visit(source)
  return out
}

const TS_EXTENSION = /\.([mc]?)ts$/

/** Whether a specifier names a TypeScript source by a relative path (a declaration file is not one). */
export function namesTypeScriptSource(specifier: string): boolean {
  return (specifier.startsWith('./') || specifier.startsWith('../')) && TS_EXTENSION.test(specifier) && !/\.d\.[mc]?ts$/.test(specifier)
}

/**
 * Rewrites relative `.ts`/`.mts`/`.cts` specifiers to `.js`/`.mjs`/`.cjs`. Same length, so the source map
 * written beside the file stays exact, and so do the offsets: `specifiers` lists every specifier of the file
 * as it is after the rewrite (one parse). Returns the new code, those, and how many were rewritten.
 */
export function rewriteTypeScriptSpecifiers(code: string, fileName?: string): { code: string; specifiers: Specifier[]; rewritten: number } {
  const specifiers = moduleSpecifiers(code, fileName)
  let out = code
  let rewritten = 0
  for (const s of specifiers) {
    if (!namesTypeScriptSource(s.text)) continue
    s.text = s.text.replace(TS_EXTENSION, '.$1js')
    out = out.slice(0, s.start) + s.text + out.slice(s.end)
    rewritten++
  }
  return { code: out, specifiers, rewritten }
}

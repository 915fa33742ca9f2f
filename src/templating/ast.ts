// Parse tree of a template, shaped like Go's text/template/parse nodes (only what the engine supports).

export type Node = ListNode | TextNode | ActionNode | IfNode | RangeNode | WithNode | BreakNode | ContinueNode | TemplateNode

export interface ListNode { kind: 'list'; pos: number; nodes: Node[] }
export interface TextNode { kind: 'text'; pos: number; text: string }
export interface ActionNode { kind: 'action'; pos: number; pipe: PipeNode }
export interface BranchNode { pos: number; pipe: PipeNode; list: ListNode; elseList: ListNode | null }
export interface IfNode extends BranchNode { kind: 'if' }
export interface RangeNode extends BranchNode { kind: 'range' }
export interface WithNode extends BranchNode { kind: 'with' }
export interface BreakNode { kind: 'break'; pos: number }
/** `{{template "name" pipeline}}` (also what `{{block}}` leaves in place). */
export interface TemplateNode { kind: 'template'; pos: number; name: string; pipe: PipeNode | null }
/** A parsed template file: the main tree and the trees `{{define}}`/`{{block}}` named. */
export interface ParsedTree { root: ListNode; defined: Map<string, ListNode> }
export interface ContinueNode { kind: 'continue'; pos: number }

export interface PipeNode { kind: 'pipe'; pos: number; isAssign: boolean; decl: VariableNode[]; cmds: CommandNode[] }
export interface CommandNode { kind: 'command'; pos: number; args: ArgNode[] }

export type ArgNode = FieldNode | VariableNode | DotNode | NilNode | BoolNode | NumberNode | StringNode | IdentifierNode | ChainNode | PipeNode
export interface FieldNode { kind: 'field'; pos: number; ident: string[] }
export interface VariableNode { kind: 'variable'; pos: number; ident: string[] }
export interface DotNode { kind: 'dot'; pos: number }
export interface NilNode { kind: 'nil'; pos: number }
export interface BoolNode { kind: 'bool'; pos: number; value: boolean }
export interface StringNode { kind: 'string'; pos: number; quoted: string; text: string }
export interface IdentifierNode { kind: 'identifier'; pos: number; name: string }
export interface ChainNode { kind: 'chain'; pos: number; node: ArgNode; field: string[] }
/** A numeric constant: `int` is set when the text denotes an int64, `float` when it denotes a float64
 *  (both for e.g. `1` — Go's "ideal constant"); `isFloatSyntax` mirrors Go's rule for which one an
 *  untyped argument becomes. */
export interface NumberNode { kind: 'number'; pos: number; text: string; int: bigint | null; float: number | null; isFloatSyntax: boolean }

/** Go's String() of a node, used in error messages. */
export function nodeString(n: ArgNode | CommandNode): string {
  switch (n.kind) {
    case 'field': return '.' + n.ident.join('.')
    case 'variable': return n.ident.join('.')
    case 'dot': return '.'
    case 'nil': return 'nil'
    case 'bool': return String(n.value)
    case 'string': return n.quoted
    case 'identifier': return n.name
    case 'number': return n.text
    case 'chain': return (n.node.kind === 'pipe' ? `(${nodeString(n.node)})` : nodeString(n.node)) + '.' + n.field.join('.')
    case 'command': return n.args.map((a) => (a.kind === 'pipe' ? `(${nodeString(a)})` : nodeString(a))).join(' ')
    case 'pipe': {
      const decl = n.decl.length > 0 ? n.decl.map((d) => d.ident[0]).join(', ') + (n.isAssign ? ' = ' : ' := ') : ''
      return decl + n.cmds.map(nodeString).join(' | ')
    }
  }
}

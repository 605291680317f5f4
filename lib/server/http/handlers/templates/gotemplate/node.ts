/**
 * The parse tree of a Go template (`text/template/parse/node.go`), and how each node prints
 * itself in messages (Go's `String` methods).
 *
 * @module
 */
import { quote } from "./fmt.ts";

/** Where a node is: its offset in the source and the tree (for the name and the text). */
interface At {
  pos: number;
  tree: TreeInfo;
}

/** What a node knows of its tree: the parse name and the source text. */
export interface TreeInfo {
  parseName: string;
  text: string;
}

export interface TextNode extends At {
  type: "text";
  text: string;
}
export interface CommentNode extends At {
  type: "comment";
  text: string;
}
export interface ActionNode extends At {
  type: "action";
  line: number;
  pipe: PipeNode;
}
export interface PipeNode extends At {
  type: "pipe";
  line: number;
  isAssign: boolean;
  decl: VariableNode[];
  cmds: CommandNode[];
}
export interface CommandNode extends At {
  type: "command";
  args: ArgNode[];
}
export interface IdentifierNode extends At {
  type: "identifier";
  ident: string;
}
export interface VariableNode extends At {
  type: "variable";
  ident: string[];
}
export interface DotNode extends At {
  type: "dot";
}
export interface NilNode extends At {
  type: "nil";
}
export interface FieldNode extends At {
  type: "field";
  ident: string[];
}
export interface ChainNode extends At {
  type: "chain";
  node: ArgNode;
  field: string[];
}
export interface BoolNode extends At {
  type: "bool";
  value: boolean;
}
/** A number constant with every reading Go makes of it. */
export interface NumberNode extends At {
  type: "number";
  text: string;
  isInt: boolean;
  isUint: boolean;
  isFloat: boolean;
  int: bigint;
  uint: bigint;
  float: number;
}
export interface StringNode extends At {
  type: "string";
  quoted: string;
  text: string;
}
export interface EndNode extends At {
  type: "end";
}
export interface ElseNode extends At {
  type: "else";
}
export interface BreakNode extends At {
  type: "break";
}
export interface ContinueNode extends At {
  type: "continue";
}
export interface BranchNode extends At {
  type: "if" | "range" | "with";
  line: number;
  pipe: PipeNode;
  list: ListNode;
  elseList: ListNode | null;
}
export interface TemplateNode extends At {
  type: "template";
  line: number;
  name: string;
  pipe: PipeNode | null;
}
export interface ListNode extends At {
  type: "list";
  nodes: Node[];
}

/** The nodes a command's arguments can be. */
export type ArgNode =
  | IdentifierNode
  | VariableNode
  | DotNode
  | NilNode
  | FieldNode
  | ChainNode
  | BoolNode
  | NumberNode
  | StringNode
  | PipeNode;

/** Every node. */
export type Node =
  | TextNode
  | CommentNode
  | ActionNode
  | CommandNode
  | ArgNode
  | EndNode
  | ElseNode
  | BreakNode
  | ContinueNode
  | BranchNode
  | TemplateNode
  | ListNode;

/** How Go prints a node (`Node.String`). */
export function nodeString(n: Node): string {
  switch (n.type) {
    case "text":
      return quote(n.text);
    case "comment":
      return `{{${n.text}}}`;
    case "action":
      return `{{${nodeString(n.pipe)}}}`;
    case "pipe": {
      let s = "";
      if (n.decl.length > 0) {
        s = n.decl.map(nodeString).join(", ") + (n.isAssign ? " = " : " := ");
      }
      return s + n.cmds.map(nodeString).join(" | ");
    }
    case "command":
      return n.args.map((a) => a.type === "pipe" ? `(${nodeString(a)})` : nodeString(a)).join(" ");
    case "identifier":
      return n.ident;
    case "variable":
      return n.ident.join(".");
    case "dot":
      return ".";
    case "nil":
      return "nil";
    case "field":
      return n.ident.map((f) => "." + f).join("");
    case "chain": {
      const inner = n.node.type === "pipe" ? `(${nodeString(n.node)})` : nodeString(n.node);
      return inner + n.field.map((f) => "." + f).join("");
    }
    case "bool":
      return String(n.value);
    case "number":
      return n.text;
    case "string":
      return n.quoted;
    case "end":
      return "{{end}}";
    case "else":
      return "{{else}}";
    case "break":
      return "{{break}}";
    case "continue":
      return "{{continue}}";
    case "if":
    case "range":
    case "with": {
      const e = n.elseList ? `{{else}}${nodeString(n.elseList)}` : "";
      return `{{${n.type} ${nodeString(n.pipe)}}}${nodeString(n.list)}${e}{{end}}`;
    }
    case "template":
      return n.pipe
        ? `{{template ${quote(n.name)} ${nodeString(n.pipe)}}}`
        : `{{template ${quote(n.name)}}}`;
    case "list":
      return n.nodes.map(nodeString).join("");
  }
}

/** True when a tree has nothing but space text and comments (Go's `IsEmptyTree`). */
export function isEmptyTree(n: Node | null): boolean {
  if (n === null) return true;
  switch (n.type) {
    case "list":
      return n.nodes.every(isEmptyTree);
    case "text":
      return n.text.trim() === "";
    case "comment":
      return true;
    default:
      return false;
  }
}

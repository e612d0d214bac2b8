/**
 * Inserts a call at the start of every function body of one module's JavaScript (as the TypeScript loader emitted
 * it), so that each call of the function is recorded as (file, function name) when it begins. Nothing else changes:
 * a block body gets one statement first (after its directives), an expression body becomes `(record, expression)`,
 * and the recorder itself is one function declaration appended to the module (hoisted, so even a module still being
 * evaluated in an import circle can record).
 */
import ts from 'typescript';
import { TRACE_KEY } from './protocol.js';

/** The recorder's name inside an instrumented module (no project module declares it). */
const RECORD = '__rt$trace';

export interface Instrumented {
  readonly code: string;
  /** The names given to the functions instrumented, in source order. */
  readonly functions: readonly string[];
  /** Of those, the ones written inside the function named by `enclosedBy` (its closures), in source order. */
  readonly enclosed: readonly string[];
}

export interface InstrumentOptions {
  /** Functions (by name) whose first argument is handed to the recorder too (not arrow functions: no `arguments`). */
  readonly withArgument?: readonly string[];
  /** A function (by name) whose inner functions are listed as `enclosed`. */
  readonly enclosedBy?: string;
}

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.FunctionExpression
  | ts.ArrowFunction
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration;

function isFunction(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/**
 * The compiler's own helpers (`var __name = (target, value) => ...` at the top of an emitted module) are not the
 * project's functions: recording them would count the compiler, not the code.
 */
function isCompilerHelper(node: FunctionNode): boolean {
  let parent = node.parent;
  while (ts.isParenthesizedExpression(parent)) parent = parent.parent;
  return (
    ts.isVariableDeclaration(parent) &&
    ts.isIdentifier(parent.name) &&
    parent.name.text.startsWith('__') &&
    ts.isVariableStatement(parent.parent.parent) &&
    ts.isSourceFile(parent.parent.parent.parent)
  );
}

function propertyName(name: ts.PropertyName | ts.BindingName, source: ts.SourceFile): string {
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) {
    return name.text;
  }
  return `[${name.getText(source)}]`;
}

/** The expression a value stands in, past parentheses and the compiler's `__name(value, "name")` wrapper. */
function outerOf(node: ts.Node): { node: ts.Node; keptName?: string } {
  let current = node;
  let keptName: string | undefined;
  for (;;) {
    const parent = current.parent;
    if (ts.isParenthesizedExpression(parent)) {
      current = parent;
      continue;
    }
    if (
      ts.isCallExpression(parent) &&
      ts.isIdentifier(parent.expression) &&
      parent.expression.text === '__name' &&
      parent.arguments[0] === current
    ) {
      const kept = parent.arguments[1];
      if (kept && ts.isStringLiteral(kept)) keptName = kept.text;
      current = parent;
      continue;
    }
    return keptName === undefined ? { node: current } : { node: current, keptName };
  }
}

/** The name a value is bound to where it is written (`const x = value`, `{ x: value }`, `a.b = value`), if any. */
function bindingName(node: ts.Node, source: ts.SourceFile): string | undefined {
  const { node: outer, keptName } = outerOf(node);
  const parent = outer.parent;
  if (ts.isVariableDeclaration(parent) && parent.initializer === outer) return propertyName(parent.name, source);
  if (ts.isPropertyAssignment(parent) && parent.initializer === outer) {
    const owner = bindingName(parent.parent, source);
    const name = propertyName(parent.name, source);
    return owner ? `${owner}.${name}` : name;
  }
  if (ts.isPropertyDeclaration(parent) && parent.initializer === outer) {
    return `${className(parent.parent, source)}.${propertyName(parent.name, source)}`;
  }
  if (
    ts.isBinaryExpression(parent) &&
    parent.right === outer &&
    parent.operatorToken.kind === ts.SyntaxKind.EqualsToken
  ) {
    return parent.left.getText(source).replace(/^this\./, '');
  }
  return keptName;
}

function className(node: ts.ClassLikeDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.text;
  return bindingName(node, source) ?? '<class>';
}

/** The name of the function that holds `node`, or `<module>` at the top level. */
function enclosingName(node: ts.Node, source: ts.SourceFile): string {
  for (let parent = node.parent; parent; parent = parent.parent) {
    if (isFunction(parent)) return nameOf(parent, source);
  }
  return '<module>';
}

/**
 * A readable, stable name: `f`, `Class.method`, `Class.get size`, `object.method`, and for an unnamed function
 * where it is written: `Class.method/then(=>)` (an argument of `.then` inside `Class.method`).
 */
export function nameOf(node: FunctionNode, source: ts.SourceFile): string {
  if (ts.isFunctionDeclaration(node)) return node.name?.text ?? 'default';
  if (
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  ) {
    const member = ts.isConstructorDeclaration(node)
      ? 'constructor'
      : `${ts.isGetAccessorDeclaration(node) ? 'get ' : ts.isSetAccessorDeclaration(node) ? 'set ' : ''}${propertyName(node.name, source)}`;
    const owner = node.parent;
    if (ts.isClassLike(owner)) return `${className(owner, source)}.${member}`;
    const objectName = bindingName(owner, source);
    return objectName ? `${objectName}.${member}` : `${enclosingName(owner, source)}/{${member}}`;
  }
  if (ts.isFunctionExpression(node) && node.name) return node.name.text;
  const bound = bindingName(node, source);
  if (bound) return bound;
  const mark = ts.isArrowFunction(node) ? '=>' : 'function';
  const { node: outer } = outerOf(node);
  const parent = outer.parent;
  let where = mark;
  if (
    (ts.isCallExpression(parent) || ts.isNewExpression(parent)) &&
    parent.arguments?.includes(outer as ts.Expression)
  ) {
    const callee = parent.expression;
    const called = ts.isPropertyAccessExpression(callee)
      ? callee.name.text
      : ts.isIdentifier(callee)
        ? callee.text
        : '?';
    where = `${called}(${mark})`;
  }
  return `${enclosingName(node, source)}/${where}`;
}

interface Insertion {
  readonly at: number;
  readonly text: string;
}

/** The position right after a block's opening brace and its directive prologue (`'use strict'` must stay first). */
function blockStart(body: ts.Block, source: ts.SourceFile): number {
  let at = body.getStart(source) + 1;
  for (const statement of body.statements) {
    if (!ts.isExpressionStatement(statement) || !ts.isStringLiteral(statement.expression)) break;
    at = statement.getEnd();
  }
  return at;
}

/**
 * Instruments `code` (a module's JavaScript). `file` is what the recorder is told (the project-relative path of the
 * original source).
 */
export function instrument(code: string, file: string, options: InstrumentOptions = {}): Instrumented {
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const insertions: Insertion[] = [];
  const functions: string[] = [];
  const enclosed: string[] = [];
  const visit = (node: ts.Node, inside: boolean): void => {
    let within = inside;
    if (isFunction(node) && node.body && !isCompilerHelper(node)) {
      const name = nameOf(node, source);
      functions.push(name);
      if (inside) enclosed.push(name);
      if (name === options.enclosedBy) within = true;
      const argument = options.withArgument?.includes(name) && !ts.isArrowFunction(node) ? ',arguments[0]' : '';
      const call = `${RECORD}(${JSON.stringify(name)}${argument})`;
      if (ts.isBlock(node.body)) {
        insertions.push({ at: blockStart(node.body, source), text: `${call};` });
      } else {
        insertions.push({ at: node.body.getStart(source), text: `(${call},` });
        insertions.push({ at: node.body.getEnd(), text: ')' });
      }
    }
    ts.forEachChild(node, (child) => visit(child, within));
  };
  visit(source, false);
  // Appended before a trailing source map comment, which must stay the module's last line.
  const mapAt = code.search(/\n\/\/# sourceMappingURL=[^\n]*\s*$/);
  const recorder =
    // Absent a recorder (globalThis[Symbol.for(TRACE_KEY)]), the inserted calls record nothing.
    `;function ${RECORD}(name,argument){const record=globalThis[Symbol.for(${JSON.stringify(TRACE_KEY)})];` +
    `if(record!==undefined)record(${JSON.stringify(file)},name,argument)}`;
  insertions.push({ at: mapAt < 0 ? code.length : mapAt, text: recorder });
  // Stable by position: text inserted at one place keeps the order it was found in (outer before inner).
  const ordered = insertions.map((insertion, index) => ({ ...insertion, index }));
  ordered.sort((a, b) => a.at - b.at || a.index - b.index);
  let out = '';
  let from = 0;
  for (const { at, text } of ordered) {
    out += code.slice(from, at) + text;
    from = at;
  }
  out += code.slice(from);
  return { code: out, functions, enclosed };
}

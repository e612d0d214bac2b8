import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { FAKE_KNOBS } from './fakes/openai-server/knobs.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const sources = (dir: string): string[] =>
  readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
const importsOf = (file: string) =>
  [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map(
    (m) => m[1] ?? '',
  );

describe('architecture', () => {
  it('keeps platform SDKs and dockerode out of src/ (ports point inward)', () => {
    const offenders = sources('src').flatMap((file) =>
      importsOf(file)
        .filter((spec) => /^(discord\.js|@discordjs\/|@slack\/|dockerode)/.test(spec))
        .map((spec) => `${file} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('lets only the composition root import adapters/ and sandbox/', () => {
    const offenders = sources('src')
      .filter((file) => file !== path.join('src', 'main.ts'))
      .flatMap((file) =>
        importsOf(file)
          .filter((spec) => /(^|\/)(adapters|sandbox)\//.test(spec))
          .map((spec) => `${file} imports ${spec}`),
      );
    expect(offenders).toEqual([]);
  });

  it('keeps src/room/ pure: no I/O, no clock, no randomness', () => {
    const offenders = sources('src/room').flatMap((file) => {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      const bad = [/from 'node:/, /Date\.now|new Date\(/, /Math\.random/, /process\./].filter((re) => re.test(text));
      return bad.map((re) => `${file}: ${re}`);
    });
    expect(offenders).toEqual([]);
  });

  it("gives the room's executors a room handle, never the room actor", () => {
    // Turns, batches, posts, timers and the effects that start them know a room by its handle and report by event.
    // Messaging alone reaches rooms: an agent's action is an event for the room it acts on (which may be another).
    const executors = sources('src/bridge/executors').filter((file) => !file.endsWith('messaging.ts'));
    expect(executors.length).toBeGreaterThan(5);
    const offenders = executors.flatMap((file) => {
      return importsOf(file)
        .filter((spec) => /room-actor(\.js)?$/.test(spec))
        .map((spec) => `${file} imports ${spec}`);
    });
    expect(offenders).toEqual([]);
  });

  it('keeps src/room/ on its own: every import of src/room/** resolves inside src/room', () => {
    const room = path.join(ROOT, 'src', 'room');
    const offenders = sources('src/room').flatMap((file) =>
      moduleSpecifiers(file)
        .filter((spec) => {
          if (!spec.startsWith('.')) return true; // a package, or node:
          const target = path.resolve(ROOT, path.dirname(file), spec);
          return target !== room && !target.startsWith(room + path.sep);
        })
        .map((spec) => `${file} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
    // The parse finds what the files import (a test that found nothing would prove nothing).
    expect(moduleSpecifiers(path.join('src', 'room', 'decide.ts'))).toContain('./draft.js');
  });

  it('keeps every source file of src/, adapters/ and sandbox/ within 400 lines (one concept per file)', () => {
    const offenders = ['src', 'adapters', 'sandbox'].flatMap((dir) =>
      sources(dir).flatMap((file) => {
        const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n').length - 1;
        return lines > 400 ? [`${file}: ${lines} lines`] : [];
      }),
    );
    expect(offenders).toEqual([]);
  });

  it("offers none of the fake model server's knobs in what the demo exports", () => {
    // The fake's failures, delays, dialects and controls, and anything named like one.
    const knobs = new Set(FAKE_KNOBS);
    const faultLike = /fail|error|hang|stall|delay|drop|break|fault|dialect/i;
    expect(knobs.has('hang')).toBe(true);
    const offenders = ['src/demo.ts', ...sources('src/demo')].flatMap((file) =>
      exportedMembers(file)
        .filter((name) => knobs.has(name) || faultLike.test(name))
        .map((name) => `${file} exports ${name}`),
    );
    expect(offenders).toEqual([]);
  });

  it('keeps in src/demo/ only what `npm run demo` runs', () => {
    const reached = new Set<string>();
    const visit = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const spec of importsOf(file)) {
        if (!spec.startsWith('.')) continue;
        const target = path.join(path.dirname(file), spec.replace(/\.js$/, '.ts'));
        if (target.startsWith(`src${path.sep}demo`) && existsSync(path.join(ROOT, target))) visit(target);
      }
    };
    visit(path.join('src', 'demo.ts'));
    expect(sources('src/demo').filter((file) => !reached.has(file))).toEqual([]);
  });

  it('ships no test code: nothing that is built imports test/ or bench/, nor does the build or the image take them', () => {
    const offenders = ['src', 'adapters', 'sandbox'].flatMap((dir) =>
      sources(dir).flatMap((file) =>
        importsOf(file)
          .filter((spec) => /(^|\/)(test|bench)\//.test(spec))
          .map((spec) => `${file} imports ${spec}`),
      ),
    );
    expect(offenders).toEqual([]);
    const build = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    expect(build.include.filter((dir) => /^(test|bench)\b/.test(dir))).toEqual([]);
    const copies = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')
      .split('\n')
      .filter((line) => /^COPY\s/.test(line) && /\s(\.\/)?(test|bench)\b/.test(line));
    expect(copies).toEqual([]);
  });
});

/** Every module a file names: imports and exports (`import type` too), `import()` and `require()` calls. */
function moduleSpecifiers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const specs: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) specs.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const ref = node.moduleReference.expression;
      if (ts.isStringLiteral(ref)) specs.push(ref.text);
    } else if (ts.isCallExpression(node)) {
      const [arg] = node.arguments;
      const dynamic = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const required = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      if ((dynamic || required) && arg && ts.isStringLiteralLike(arg)) specs.push(arg.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal)) specs.push(literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specs;
}

/** The names a module exports, and the members of the interfaces, type literals and classes it exports. */
function exportedMembers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  const members = (node: ts.Node): void => {
    if (
      (ts.isPropertySignature(node) ||
        ts.isMethodSignature(node) ||
        ts.isPropertyDeclaration(node) ||
        ts.isMethodDeclaration(node)) &&
      ts.isIdentifier(node.name)
    ) {
      names.push(node.name.text);
    }
    ts.forEachChild(node, members);
  };
  const exported = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      names.push(...statement.exportClause.elements.map((element) => element.name.text));
    }
    if (!exported(statement)) continue;
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) names.push(declaration.name.text);
      }
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement)) &&
      statement.name
    ) {
      names.push(statement.name.text);
    }
    // Members, also of the option and reply types an exported function takes or gives.
    members(statement);
  }
  return names;
}

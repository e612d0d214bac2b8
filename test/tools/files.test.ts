import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SandboxError } from '../../src/errors.js';
import type { ExecResult, Sandbox } from '../../src/ports.js';
import {
  GLOB_MATCH_LIMIT,
  globTool,
  READ_LIMIT_BYTES,
  readFilesTool,
  WRITE_LIMIT_BYTES,
  writeFilesTool,
} from '../../src/tools/files.js';
import type { Tool, ToolContext } from '../../src/tools/tool.js';
import { UnavailableSandbox } from '../../src/tools/unavailable-sandbox.js';
import { startHarness } from '../helpers/harness.js';
import { dataOf } from '../helpers/untrusted.js';

/** A sandbox whose workspace is a host folder; commands only get recorded. */
class FolderSandbox implements Sandbox {
  readonly commands: string[] = [];
  constructor(private readonly dir: string) {}
  async exec(_channelKey: string, command: string): Promise<ExecResult> {
    this.commands.push(command);
    return { output: '', exitCode: 0, timedOut: false };
  }
  workspaceDir(): string {
    return this.dir;
  }
  async close(): Promise<void> {}
}

const scratch = mkdtempSync(path.join(tmpdir(), 'roundtable-files-'));
let workspace: string;
let outside: string;
let sandbox: FolderSandbox;
let counter = 0;

function contextFor(box: Sandbox): ToolContext {
  return {
    agent: 'coder',
    channelKey: 'test:room',
    sandbox: box,
    commandTimeoutMs: 5000,
    signal: new AbortController().signal,
  };
}

async function call(tool: Tool, args: Record<string, unknown>, box: Sandbox = sandbox) {
  const result = await tool.run(args, contextFor(box));
  let parsed: Record<string, unknown> | undefined;
  try {
    parsed = JSON.parse(result.output) as Record<string, unknown>;
  } catch {
    parsed = undefined;
  }
  return { ...result, parsed };
}

function put(rel: string, content: string | Buffer): void {
  const file = path.join(workspace, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

beforeEach(() => {
  counter += 1;
  workspace = path.join(scratch, `ws-${counter}`);
  outside = path.join(scratch, `outside-${counter}`);
  mkdirSync(workspace);
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'secret.txt'), 'TOP-SECRET');
  sandbox = new FolderSandbox(workspace);
});

afterEach(() => {
  rmSync(workspace, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('read_files', () => {
  it('answers each path with its content or an error, and describes the run', async () => {
    put('sales.csv', 'region,total\nnorth,10\n');
    put('notes/todo.md', '# todo\n');
    mkdirSync(path.join(workspace, 'data'));
    const result = await call(readFilesTool, { files: ['sales.csv', 'notes/todo.md', 'missing.txt', 'data'] });
    expect(result.input).toBe('read_files sales.csv, notes/todo.md, missing.txt, data');
    expect(result.output).toBe(JSON.stringify(result.parsed, null, 2));
    expect(result.parsed).toEqual({
      'sales.csv': 'region,total\nnorth,10\n',
      'notes/todo.md': '# todo\n',
      'missing.txt': '[ERROR: no such file]',
      data: '[ERROR: is a directory (list it with glob)]',
    });
  });

  it('cuts a file over the limit and says so', async () => {
    put('big.txt', 'x'.repeat(READ_LIMIT_BYTES + 5000));
    const { parsed } = await call(readFilesTool, { files: ['big.txt'] });
    const text = String(parsed?.['big.txt']);
    expect(text.startsWith('x'.repeat(READ_LIMIT_BYTES))).toBe(true);
    expect(text).toMatch(/\n\[truncated: showing the first 100 KB of 105 KB; read the rest with bash/);
  });

  it('does not show binary files', async () => {
    put('image.bin', Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]));
    const { parsed } = await call(readFilesTool, { files: ['image.bin'] });
    expect(parsed).toEqual({ 'image.bin': '[ERROR: binary file (5 bytes); not shown]' });
  });

  it('refuses a FIFO instead of waiting on it', async () => {
    execFileSync('mkfifo', [path.join(workspace, 'pipe')]);
    const { parsed } = await call(readFilesTool, { files: ['pipe'] });
    expect(parsed).toEqual({ pipe: '[ERROR: is not a regular file]' });
  });

  it('answers a call without a list of paths with one error line', async () => {
    const result = await call(readFilesTool, {});
    expect(result.output).toBe('[ERROR: the "files" argument must be a non-empty list of paths]');
    // The arguments are checked against the tool's schema first: a malformed call is refused whole.
    const mixed = await call(readFilesTool, { files: [42, 'a.txt'] });
    expect(mixed.status).toBe('refused');
    expect(mixed.output).toBe('[ERROR: each path must be a string]');
  });
});

describe('write_files', () => {
  it('writes each file, creating parent folders, and answers success per file', async () => {
    put('old.txt', 'old content that is longer');
    const result = await call(writeFilesTool, {
      files: [
        { filename: 'test.js', content: 'console.log(1);\n' },
        { filename: 'src/lib/util.py', content: 'def f():\n    return 1\n' },
        { filename: 'old.txt', content: 'new' },
      ],
    });
    expect(result.input).toBe('write_files test.js, src/lib/util.py, old.txt');
    expect(result.parsed).toEqual({ 'test.js': 'success', 'src/lib/util.py': 'success', 'old.txt': 'success' });
    expect(readFileSync(path.join(workspace, 'test.js'), 'utf8')).toBe('console.log(1);\n');
    expect(readFileSync(path.join(workspace, 'src/lib/util.py'), 'utf8')).toBe('def f():\n    return 1\n');
    expect(readFileSync(path.join(workspace, 'old.txt'), 'utf8')).toBe('new');
  });

  it("leaves new files and folders usable by the container's user (uid 1000)", async () => {
    await call(writeFilesTool, { files: [{ filename: 'made/here.txt', content: 'x' }] });
    const file = lstatSync(path.join(workspace, 'made/here.txt'));
    const folder = lstatSync(path.join(workspace, 'made'));
    const uid = process.getuid?.();
    if (uid === 0 || uid === 1000) {
      expect([file.uid, folder.uid]).toEqual([1000, 1000]);
    } else {
      expect(file.mode & 0o666).toBe(0o666);
      expect(folder.mode & 0o777).toBe(0o777);
    }
  });

  it('refuses content over the limit and a folder as target, each on its own', async () => {
    mkdirSync(path.join(workspace, 'dir'));
    const { parsed } = await call(writeFilesTool, {
      files: [
        { filename: 'huge.txt', content: 'y'.repeat(WRITE_LIMIT_BYTES + 1) },
        { filename: 'dir', content: 'x' },
        { filename: 'fine.txt', content: 'ok' },
      ],
    });
    expect(parsed).toEqual({
      'huge.txt': '[ERROR: the content is 1048577 bytes; the limit is 1048576 bytes (1 MB) per file]',
      dir: '[ERROR: is a directory]',
      'fine.txt': 'success',
    });
    expect(existsSync(path.join(workspace, 'huge.txt'))).toBe(false);
  });

  it('writes nothing when the workspace has no room for it (SANDBOX_DISK, SANDBOX_FILES), and says why', async () => {
    const asked: Array<[number, number | undefined]> = [];
    const full = Object.assign(new FolderSandbox(workspace), {
      async checkDisk(_key: string, bytes: number, files?: number) {
        asked.push([bytes, files]);
        if (bytes > 4) throw new SandboxError('the workspace is full: remove files first');
      },
    });
    const { parsed } = await call(
      writeFilesTool,
      {
        files: [
          { filename: 'a.txt', content: 'aaa' },
          { filename: 'b.txt', content: 'bb' },
        ],
      },
      full,
    );
    expect(asked).toEqual([[5, 2]]);
    expect(parsed).toEqual({
      'a.txt': '[ERROR: the workspace is full: remove files first]',
      'b.txt': '[ERROR: the workspace is full: remove files first]',
    });
    expect(existsSync(path.join(workspace, 'a.txt'))).toBe(false);
    const { parsed: fits } = await call(writeFilesTool, { files: [{ filename: 'a.txt', content: 'aaa' }] }, full);
    expect(fits).toEqual({ 'a.txt': 'success' });
  });

  it('refuses a malformed call whole, naming what is wrong, and writes nothing', async () => {
    const noContent = await call(writeFilesTool, {
      files: [{ filename: 'a.txt' }, { filename: 'b.txt', content: 'b' }],
    });
    expect(noContent.status).toBe('refused');
    expect(noContent.output).toBe('[ERROR: "content" must be a string]');
    const noName = await call(writeFilesTool, { files: [{ content: 'no name' }] });
    expect(noName.output).toBe('[ERROR: "filename" must be a path]');
    expect(existsSync(path.join(workspace, 'b.txt'))).toBe(false);
  });

  it('answers a call without files with one error line', async () => {
    const result = await call(writeFilesTool, { files: 'a.txt' });
    expect(result.output).toBe('[ERROR: the "files" argument must be a non-empty list of {filename, content} objects]');
  });
});

describe('glob', () => {
  beforeEach(() => {
    for (const rel of [
      'a.md',
      'b.md',
      'c.txt',
      'data/1.csv',
      'data/2.csv',
      'data/10.csv',
      'src/x.py',
      'src/deep/y.py',
    ]) {
      put(rel, rel);
    }
    put('.hidden/z.py', 'hidden');
    put('.env', 'SECRET=1');
  });

  it('matches *, **, ?, [..] and {a,b}; relative, sorted, folders marked with /', async () => {
    const result = await call(globTool, {
      patterns: ['*.md', '**/*.py', 'data/?.csv', 'data/[12]*.csv', '{a,c}.*', '*', 'nothing/*'],
    });
    expect(result.input).toBe('glob *.md, **/*.py, data/?.csv, data/[12]*.csv, {a,c}.* (+2 more)');
    expect(result.parsed).toEqual({
      '*.md': ['a.md', 'b.md'],
      '**/*.py': ['src/deep/y.py', 'src/x.py'],
      'data/?.csv': ['data/1.csv', 'data/2.csv'],
      'data/[12]*.csv': ['data/1.csv', 'data/10.csv', 'data/2.csv'],
      '{a,c}.*': ['a.md', 'c.txt'],
      '*': ['a.md', 'b.md', 'c.txt', 'data/', 'src/'],
      'nothing/*': [],
    });
  });

  it('matches names starting with a dot only when the pattern does', async () => {
    const { parsed } = await call(globTool, { patterns: ['.*', '.hidden/*.py', 'src/x.py'] });
    expect(parsed).toEqual({ '.*': ['.env', '.hidden/'], '.hidden/*.py': ['.hidden/z.py'], 'src/x.py': ['src/x.py'] });
  });

  it(`lists at most ${GLOB_MATCH_LIMIT} paths per pattern, with a note`, async () => {
    for (let i = 0; i < GLOB_MATCH_LIMIT + 10; i++) put(`many/f${String(i).padStart(4, '0')}.log`, '');
    const { parsed } = await call(globTool, { patterns: ['many/*.log'] });
    const list = parsed?.['many/*.log'] as string[];
    expect(list).toHaveLength(GLOB_MATCH_LIMIT + 1);
    expect(list[0]).toBe('many/f0000.log');
    expect(list.at(-1)).toBe('[... 10 more matches not shown; use a narrower pattern]');
  });

  it('answers a call without patterns with one error line', async () => {
    const result = await call(globTool, { patterns: [] });
    expect(result.output).toBe('[ERROR: the "patterns" argument must be a non-empty list of glob patterns]');
  });
});

describe('confinement to the workspace', () => {
  it('accepts /workspace/... and absolute host paths inside the workspace', async () => {
    const written = await call(writeFilesTool, { files: [{ filename: '/workspace/sub/in.txt', content: 'inside' }] });
    expect(written.parsed).toEqual({ '/workspace/sub/in.txt': 'success' });
    expect(readFileSync(path.join(workspace, 'sub/in.txt'), 'utf8')).toBe('inside');
    const read = await call(readFilesTool, { files: ['/workspace/sub/in.txt', path.join(workspace, 'sub/in.txt')] });
    expect(Object.values(read.parsed ?? {})).toEqual(['inside', 'inside']);
    const found = await call(globTool, { patterns: ['/workspace/sub/*.txt'] });
    expect(found.parsed).toEqual({ '/workspace/sub/*.txt': ['sub/in.txt'] });
  });

  it('refuses ../ and absolute paths outside the workspace, per item', async () => {
    put('ok.txt', 'fine');
    const climbing = path.relative(workspace, path.join(outside, 'secret.txt'));
    const read = await call(readFilesTool, {
      files: [climbing, '/workspace/../etc/passwd', path.join(outside, 'secret.txt'), 'ok.txt'],
    });
    expect(read.parsed).toEqual({
      [climbing]: '[ERROR: the path leads outside /workspace]',
      '/workspace/../etc/passwd': '[ERROR: the path leads outside /workspace]',
      [path.join(outside, 'secret.txt')]: '[ERROR: absolute paths must be inside /workspace]',
      'ok.txt': 'fine',
    });
    const written = await call(writeFilesTool, {
      files: [
        { filename: `../outside-${counter}/planted.txt`, content: 'x' },
        { filename: path.join(outside, 'planted.txt'), content: 'x' },
      ],
    });
    expect(Object.values(written.parsed ?? {})).toEqual([
      '[ERROR: the path leads outside /workspace]',
      '[ERROR: absolute paths must be inside /workspace]',
    ]);
    expect(existsSync(path.join(outside, 'planted.txt'))).toBe(false);
    const found = await call(globTool, { patterns: ['../*', '/etc/*'] });
    expect(found.parsed).toEqual({
      '../*': '[ERROR: the path leads outside /workspace]',
      '/etc/*': '[ERROR: absolute paths must be inside /workspace]',
    });
  });

  it('never follows a symlink out of the workspace', async () => {
    symlinkSync(outside, path.join(workspace, 'out-dir'));
    symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'out-file'));
    symlinkSync(path.join(outside, 'not-yet.txt'), path.join(workspace, 'dangling'));
    const read = await call(readFilesTool, { files: ['out-dir/secret.txt', 'out-file'] });
    expect(read.parsed).toEqual({
      'out-dir/secret.txt': '[ERROR: out-dir is a symlink that points outside /workspace]',
      'out-file': '[ERROR: out-file is a symlink that points outside /workspace]',
    });
    expect(read.output).not.toContain('TOP-SECRET');
    const written = await call(writeFilesTool, {
      files: [
        { filename: 'out-dir/planted.txt', content: 'x' },
        { filename: 'out-file', content: 'overwritten' },
        { filename: 'dangling', content: 'x' },
        { filename: 'out-dir/new/deeper.txt', content: 'x' },
      ],
    });
    expect(written.parsed).toEqual({
      'out-dir/planted.txt': '[ERROR: out-dir is a symlink that points outside /workspace]',
      'out-file': '[ERROR: out-file is a symlink that points outside /workspace]',
      dangling: '[ERROR: dangling is a symlink to something that does not exist]',
      'out-dir/new/deeper.txt': '[ERROR: out-dir is a symlink that points outside /workspace]',
    });
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP-SECRET');
    expect(existsSync(path.join(outside, 'planted.txt'))).toBe(false);
    expect(existsSync(path.join(outside, 'not-yet.txt'))).toBe(false);
    expect(existsSync(path.join(outside, 'new'))).toBe(false);
    const found = await call(globTool, { patterns: ['**', 'out-dir/*'] });
    expect(found.parsed).toEqual({ '**': ['dangling', 'out-dir', 'out-file'], 'out-dir/*': [] });
  });

  it('follows a symlink that stays inside the workspace', async () => {
    put('real/data.txt', 'linked');
    symlinkSync(path.join(workspace, 'real'), path.join(workspace, 'alias'));
    const read = await call(readFilesTool, { files: ['alias/data.txt'] });
    expect(read.parsed).toEqual({ 'alias/data.txt': 'linked' });
    const written = await call(writeFilesTool, { files: [{ filename: 'alias/more.txt', content: 'via link' }] });
    expect(written.parsed).toEqual({ 'alias/more.txt': 'success' });
    expect(readFileSync(path.join(workspace, 'real/more.txt'), 'utf8')).toBe('via link');
  });
});

describe('the workspace itself', () => {
  it('gives every item one clear error when the sandbox has no workspace', async () => {
    const none = new UnavailableSandbox('Docker is not running');
    const read = await call(readFilesTool, { files: ['a.txt', 'b.txt'] }, none);
    const error = '[ERROR: this room has no workspace: the sandbox is not available]';
    expect(read.parsed).toEqual({ 'a.txt': error, 'b.txt': error });
    const written = await call(writeFilesTool, { files: [{ filename: 'a.txt', content: 'x' }] }, none);
    expect(written.parsed).toEqual({ 'a.txt': error });
    const found = await call(globTool, { patterns: ['*'] }, none);
    expect(found.parsed).toEqual({ '*': error });
  });

  it('asks the sandbox to prepare a workspace that does not exist yet', async () => {
    const fresh = new FolderSandbox(path.join(workspace, 'not-yet', 'ws'));
    const written = await call(writeFilesTool, { files: [{ filename: 'first.txt', content: 'hello' }] }, fresh);
    expect(written.parsed).toEqual({ 'first.txt': 'success' });
    expect(fresh.commands).toEqual(['true']);
    expect(readFileSync(path.join(workspace, 'not-yet/ws/first.txt'), 'utf8')).toBe('hello');
  });

  it('reports a sandbox that cannot prepare the workspace on every item', async () => {
    const broken: Sandbox = {
      exec: async () => {
        throw new Error('the sandbox image is missing');
      },
      workspaceDir: () => path.join(workspace, 'never'),
      close: async () => {},
    };
    const read = await call(readFilesTool, { files: ['a.txt'] }, broken);
    expect(read.parsed).toEqual({ 'a.txt': '[ERROR: the workspace is not ready: the sandbox image is missing]' });
  });
});

describe('through the bridge', () => {
  it('runs write_files for an agent and hands the model the per-file result', async () => {
    const h = await startHarness({
      agents: [{ name: 'coder', activation: 'always', tools: ['write_files', 'read_files'] }],
      sandbox,
    });
    try {
      h.llm.script(
        'coder',
        { toolCalls: [{ name: 'write_files', arguments: { files: [{ filename: 'a.txt', content: 'hi' }] } }] },
        { content: 'done' },
      );
      await h.adapter.say('please write a.txt');
      await h.bridge.idle();
      expect(readFileSync(path.join(workspace, 'a.txt'), 'utf8')).toBe('hi');
      const second = h.llm.requests[1];
      const toolMessage = second?.messages.find((message) => message.role === 'tool');
      expect(JSON.parse(dataOf(toolMessage?.content))).toEqual({ 'a.txt': 'success' });
      const offered = (h.llm.requests[0]?.tools ?? []) as Array<{ function: { name: string } }>;
      expect(offered.map((tool) => tool.function.name).sort()).toEqual(['read_files', 'write_files']);
      expect(h.adapter.posts.map((post) => post.text)).toContain('done');
    } finally {
      await h.close();
    }
  });
});

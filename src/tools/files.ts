import { z } from 'zod';
import { SandboxError } from '../errors.js';
import type { WorkspaceFiles } from '../ports.js';
import { defineTool, ok, type Tool } from './tool.js';
import {
  describeFsError,
  type OpenWorkspace,
  openWorkspace,
  toRelative,
  WORKSPACE_MOUNT,
  WorkspaceError,
} from './workspace-path.js';

/** Per file: enough for any source file or table a model should read whole; the rest via bash. */
export const READ_LIMIT_BYTES = 100 * 1024;
/** Per call: what one answer may put into the model's context. */
export const READ_TOTAL_LIMIT_BYTES = 400 * 1024;
export const WRITE_LIMIT_BYTES = 1024 * 1024;
/** Items per call; more is almost always a mistaken loop in the model. */
export const MAX_ITEMS = 100;
export const GLOB_MATCH_LIMIT = 500;
/** Entries one pattern may visit, so `**` in a huge tree answers instead of hanging. */
export const GLOB_SCAN_LIMIT = 20_000;
const GLOB_DEPTH_LIMIT = 32;
const BRACE_EXPANSION_LIMIT = 64;
/** A NUL byte in the first bytes means the file is not text. */
const BINARY_SNIFF_BYTES = 8000;

type PerItem<T> = Record<string, T>;

function errorText(error: unknown): string {
  return `[ERROR: ${describeFsError(error)}]`;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** `read_files a.csv, b.md (+3 more)`: what the room shows for the run. */
function describeRun(tool: string, names: readonly string[]): string {
  const shown = names.slice(0, 5).join(', ');
  return `${tool} ${shown}${names.length > 5 ? ` (+${names.length - 5} more)` : ''}`;
}

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${Number((bytes / 1024 / 1024).toFixed(1))} MB`;
}

/** Every item gets the same answer (no workspace, bad call). */
function allFailed(keys: readonly string[], message: string): string {
  return json(Object.fromEntries(keys.map((key) => [key, `[ERROR: ${message}]`])));
}

const PATHS_ERROR = 'the "files" argument must be a non-empty list of paths';

export const readFilesTool = defineTool({
  name: 'read_files',
  description:
    `Read text files from this channel's workspace (${WORKSPACE_MOUNT}). Paths are relative to it. ` +
    `Returns a JSON object mapping each path to its content or to "[ERROR: ...]". ` +
    `Files over ${sizeText(READ_LIMIT_BYTES)} are cut.`,
  schema: z.object({
    files: z
      .array(z.string({ error: 'each path must be a string' }), { error: PATHS_ERROR })
      .min(1, { error: PATHS_ERROR })
      .describe('Paths of the files to read.'),
  }),
  async run({ files }, context) {
    const input = describeRun('read_files', files);
    const workspace = await openWorkspace(context);
    if ('error' in workspace) return ok(input, allFailed(files, workspace.error));
    const result: PerItem<string> = {};
    let total = 0;
    for (const [index, file] of files.entries()) {
      if (index >= MAX_ITEMS) result[file] = `[ERROR: not read: at most ${MAX_ITEMS} files per call]`;
      else if (total >= READ_TOTAL_LIMIT_BYTES) {
        result[file] = `[ERROR: not read: this call already returned ${sizeText(total)}; read fewer files at once]`;
      } else {
        const text = await readOne(workspace, file, Math.min(READ_LIMIT_BYTES, READ_TOTAL_LIMIT_BYTES - total));
        total += Buffer.byteLength(text);
        result[file] = text;
      }
    }
    return ok(input, json(result));
  },
});

async function readOne(workspace: OpenWorkspace, file: string, limit: number): Promise<string> {
  try {
    const { bytes, size } = await workspace.files.read(toRelative(file, workspace.hostRoot), limit);
    if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return `[ERROR: binary file (${sizeText(size)}); not shown]`;
    // Streaming decode drops a multi-byte character cut in half at the limit.
    const text = new TextDecoder('utf-8').decode(bytes, { stream: size > bytes.length });
    if (size <= bytes.length) return text;
    return `${text}\n[truncated: showing the first ${sizeText(bytes.length)} of ${sizeText(size)}; read the rest with bash, e.g. sed -n or tail]`;
  } catch (error) {
    return errorText(error);
  }
}

const WRITES_ERROR = 'the "files" argument must be a non-empty list of {filename, content} objects';

export const writeFilesTool = defineTool({
  name: 'write_files',
  description:
    `Write text files in this channel's workspace (${WORKSPACE_MOUNT}), creating parent folders and ` +
    `replacing existing files. Returns a JSON object mapping each filename to "success" or "[ERROR: ...]".`,
  schema: z.object({
    files: z
      .array(
        z.object({
          filename: z
            .string({ error: '"filename" must be a path' })
            .min(1, { error: '"filename" must be a path' })
            .describe('Path relative to the workspace.'),
          content: z.string({ error: '"content" must be a string' }).describe('The whole new content of the file.'),
        }),
        { error: WRITES_ERROR },
      )
      .min(1, { error: WRITES_ERROR }),
  }),
  async run({ files }, context) {
    const keys = files.map((file) => file.filename);
    const input = describeRun('write_files', keys);
    const workspace = await openWorkspace(context);
    if ('error' in workspace) return ok(input, allFailed(keys, workspace.error));
    // The workspace's allowance (SANDBOX_DISK, SANDBOX_FILES) is checked before anything is written.
    const written = files
      .slice(0, MAX_ITEMS)
      .map((file) => Buffer.byteLength(file.content, 'utf8'))
      .filter((bytes) => bytes <= WRITE_LIMIT_BYTES);
    const adding = written.reduce((sum, bytes) => sum + bytes, 0);
    try {
      await context.sandbox.checkDisk?.(context.channelKey, adding, written.length);
    } catch (error) {
      return ok(input, allFailed(keys, error instanceof SandboxError ? error.message : describeFsError(error)));
    }
    const result: PerItem<string> = {};
    for (const [index, { filename, content }] of files.entries()) {
      if (index >= MAX_ITEMS) result[filename] = `[ERROR: not written: at most ${MAX_ITEMS} files per call]`;
      else result[filename] = await writeOne(workspace, filename, content);
    }
    return ok(input, json(result));
  },
});

async function writeOne(workspace: OpenWorkspace, filename: string, content: string): Promise<string> {
  const bytes = Buffer.from(content, 'utf8');
  if (bytes.length > WRITE_LIMIT_BYTES) {
    return `[ERROR: the content is ${bytes.length} bytes; the limit is ${WRITE_LIMIT_BYTES} bytes (${sizeText(WRITE_LIMIT_BYTES)}) per file]`;
  }
  try {
    if (filename.endsWith('/')) throw new WorkspaceError('a filename cannot end with "/"');
    await workspace.files.write(toRelative(filename, workspace.hostRoot), bytes);
    return 'success';
  } catch (error) {
    return errorText(error);
  }
}

const PATTERNS_ERROR = 'the "patterns" argument must be a non-empty list of glob patterns';

export const globTool = defineTool({
  name: 'glob',
  description:
    `Find files in this channel's workspace (${WORKSPACE_MOUNT}) by pattern: * and ? within a name, ` +
    `** across folders, [abc] and {a,b} alternatives; names starting with "." only match a pattern that does. ` +
    `Returns a JSON object mapping each pattern to its sorted relative paths (folders end with "/"), ` +
    `at most ${GLOB_MATCH_LIMIT} per pattern.`,
  schema: z.object({
    patterns: z
      .array(z.string({ error: 'each pattern must be a string' }).min(1, { error: 'each pattern must be a string' }), {
        error: PATTERNS_ERROR,
      })
      .min(1, { error: PATTERNS_ERROR })
      .describe('e.g. ["**/*.py", "data/*.csv"]'),
  }),
  async run({ patterns }, context) {
    const input = describeRun('glob', patterns);
    const workspace = await openWorkspace(context);
    if ('error' in workspace) return ok(input, allFailed(patterns, workspace.error));
    const result: PerItem<string[] | string> = {};
    for (const [index, pattern] of patterns.entries()) {
      if (index >= MAX_ITEMS) result[pattern] = `[ERROR: not searched: at most ${MAX_ITEMS} patterns per call]`;
      else result[pattern] = await globOne(workspace, pattern);
    }
    return ok(input, json(result));
  },
});

async function globOne(workspace: OpenWorkspace, pattern: string): Promise<string[] | string> {
  try {
    const found = new Set<string>();
    let scanned = 0;
    for (const expanded of expandBraces(pattern)) {
      const segments = compile(toRelative(expanded, workspace.hostRoot));
      scanned += await walkMatches(workspace.files, segments, found, GLOB_SCAN_LIMIT - scanned);
    }
    const sorted = [...found].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const shown: string[] = sorted.slice(0, GLOB_MATCH_LIMIT);
    if (sorted.length > GLOB_MATCH_LIMIT) {
      shown.push(`[... ${sorted.length - GLOB_MATCH_LIMIT} more matches not shown; use a narrower pattern]`);
    }
    if (scanned >= GLOB_SCAN_LIMIT) {
      shown.push(`[search stopped after ${GLOB_SCAN_LIMIT} entries; some matches may be missing; narrow the pattern]`);
    }
    return shown;
  } catch (error) {
    return errorText(error);
  }
}

/** A pattern segment: `**` (any number of folders) or a matcher for one name. */
type Segment = { globstar: true } | { globstar: false; literal: string | undefined; regex: RegExp; dot: boolean };

const MAGIC = /[*?[]/;

function compile(rel: string): Segment[] {
  const segments: Segment[] = [];
  for (const part of rel === '' ? [] : rel.split('/')) {
    if (part === '**') {
      // `**/**` means the same as `**`; collapsing keeps matching linear in practice.
      if (segments.at(-1)?.globstar !== true) segments.push({ globstar: true });
      continue;
    }
    let regex: RegExp;
    try {
      regex = new RegExp(`^${segmentSource(part)}$`, 'u');
    } catch {
      throw new WorkspaceError(`"${part}" is not a valid pattern (check its [...] classes)`);
    }
    segments.push({ globstar: false, literal: MAGIC.test(part) ? undefined : part, regex, dot: part.startsWith('.') });
  }
  return segments;
}

function segmentSource(part: string): string {
  let source = '';
  for (let i = 0; i < part.length; i++) {
    const char = part[i] ?? '';
    if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '[') {
      const close = part.indexOf(']', i + 2);
      if (close === -1) {
        source += '\\[';
        continue;
      }
      let body = part.slice(i + 1, close);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      source += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
      i = close;
    } else source += char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return source;
}

/** `a{b,c}d` → `abd`, `acd` (nested groups too), up to a limit. */
export function expandBraces(pattern: string): string[] {
  let depth = 0;
  let open = -1;
  const commas: number[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === '{') {
      if (depth === 0) open = i;
      depth++;
    } else if (char === '}' && depth > 0) {
      depth--;
      if (depth === 0) {
        if (commas.length === 0) {
          open = -1;
          continue;
        }
        const head = pattern.slice(0, open);
        const tail = pattern.slice(i + 1);
        const bounds = [open, ...commas, i];
        const out: string[] = [];
        for (let k = 0; k + 1 < bounds.length; k++) {
          const choice = pattern.slice((bounds[k] ?? 0) + 1, bounds[k + 1]);
          for (const rest of expandBraces(`${head}${choice}${tail}`)) {
            if (out.length < BRACE_EXPANSION_LIMIT) out.push(rest);
          }
        }
        return out;
      }
    } else if (char === ',' && depth === 1) commas.push(i);
  }
  return [pattern];
}

function matchName(segment: Segment, name: string): boolean {
  if (segment.globstar) return !name.startsWith('.');
  if (name.startsWith('.') && !segment.dot) return false;
  return segment.regex.test(name);
}

/** Whether the names match the segments from these positions on. */
function matches(segments: readonly Segment[], s: number, names: readonly string[], n: number): boolean {
  if (s === segments.length) return n === names.length;
  const segment = segments[s];
  if (!segment) return false;
  if (segment.globstar) {
    if (matches(segments, s + 1, names, n)) return true;
    return n < names.length && matchName(segment, names[n] ?? '') && matches(segments, s, names, n + 1);
  }
  return n < names.length && matchName(segment, names[n] ?? '') && matches(segments, s + 1, names, n + 1);
}

/** Whether something below these names could still match (so the folder is worth entering). */
function canExtend(segments: readonly Segment[], s: number, names: readonly string[], n: number): boolean {
  if (n === names.length) return s < segments.length;
  const segment = segments[s];
  if (!segment) return false;
  if (segment.globstar) {
    if (canExtend(segments, s + 1, names, n)) return true;
    return matchName(segment, names[n] ?? '') && canExtend(segments, s, names, n + 1);
  }
  return matchName(segment, names[n] ?? '') && canExtend(segments, s + 1, names, n + 1);
}

/**
 * Starts at the pattern's literal prefix and walks down without following symlinks (they are
 * listed, never entered), adding matching paths to `found`. Returns how many entries it visited.
 */
async function walkMatches(
  files: WorkspaceFiles,
  segments: Segment[],
  found: Set<string>,
  budget: number,
): Promise<number> {
  const prefix: string[] = [];
  for (const segment of segments) {
    if (segment.globstar || segment.literal === undefined) break;
    prefix.push(segment.literal);
  }
  const start = prefix.join('/');
  const kind = await files.kind(start).catch((error: unknown) => {
    // A literal prefix through a symlink out of the workspace simply matches nothing.
    if (error instanceof WorkspaceError) return undefined;
    throw error;
  });
  if (!kind) return 0;
  if (prefix.length === segments.length) {
    // No wildcard at all: the path itself, if it exists.
    if (start !== '') found.add(kind === 'directory' ? `${start}/` : start);
    return 1;
  }
  if (kind !== 'directory') return 1;
  let visited = 0;
  const queue: Array<{ rel: string; names: string[] }> = [{ rel: start, names: prefix }];
  for (let next = 0; next < queue.length; next++) {
    const { rel, names } = queue[next] ?? { rel: '', names: [] };
    const entries = await files.list(rel).catch(() => []);
    for (const entry of entries) {
      if (visited >= budget) return visited;
      visited++;
      const entryNames = [...names, entry.name];
      const isDirectory = entry.directory;
      if (matches(segments, 0, entryNames, 0)) {
        const shown = entryNames.join('/');
        found.add(isDirectory ? `${shown}/` : shown);
      }
      if (isDirectory && entryNames.length < GLOB_DEPTH_LIMIT && canExtend(segments, 0, entryNames, 0)) {
        queue.push({ rel: entryNames.join('/'), names: entryNames });
      }
    }
  }
  return visited;
}

/** The three file actions, for the tool registry. */
export const fileTools: readonly Tool[] = [readFilesTool, writeFilesTool, globTool];

import { type Dirent, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import type { Settings } from './settings.js';

/**
 * SANDBOX_TEMPLATE_DIR as an absolute path, checked at start-up rather than at the first `bash`
 * of some channel; undefined when it is not set.
 */
export function templateDir(settings: Pick<Settings, 'SANDBOX_TEMPLATE_DIR'>, cwd: string): string | undefined {
  if (!settings.SANDBOX_TEMPLATE_DIR) return undefined;
  const dir = path.resolve(cwd, settings.SANDBOX_TEMPLATE_DIR);
  const info = statSync(dir, { throwIfNoEntry: false });
  if (!info) throw new ConfigError('environment', 'SANDBOX_TEMPLATE_DIR', `folder ${dir} does not exist`);
  if (!info.isDirectory()) throw new ConfigError('environment', 'SANDBOX_TEMPLATE_DIR', `${dir} is not a folder`);
  return dir;
}

/** A file the bridge reads as an agent: `*.md`, not hidden, not a README. */
const isAgentFile = (name: string) =>
  name.endsWith('.md') && !name.startsWith('.') && name.toLowerCase() !== 'readme.md';

/** How deep `nestedAgentFiles` looks: enough for a folder per team, not a walk of a whole home folder. */
const NESTED_DEPTH = 3;

/**
 * AGENTS_DIR's agent files, sorted by name (the configured order), and those in its subfolders, which are not read
 * (relative paths, for a warning). The folder must exist and be a folder.
 */
export function agentFiles(agentsDir: string): { files: string[]; nested: string[] } {
  const info = statSync(agentsDir, { throwIfNoEntry: false });
  if (!info) throw new ConfigError('environment', 'AGENTS_DIR', `folder ${agentsDir} does not exist`);
  if (!info.isDirectory()) {
    throw new ConfigError(
      'environment',
      'AGENTS_DIR',
      `${agentsDir} is a file: name the folder that holds the agent files`,
    );
  }
  const files: string[] = [];
  const nested: string[] = [];
  const visit = (relative: string, depth: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(path.join(agentsDir, relative), { withFileTypes: true });
    } catch {
      return; // A subfolder this user may not read holds nothing the bridge could read either.
    }
    for (const entry of entries) {
      const name = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (depth < NESTED_DEPTH && !entry.name.startsWith('.') && entry.name !== 'node_modules')
          visit(name, depth + 1);
      } else if (isAgentFile(entry.name)) {
        (relative ? nested : files).push(name);
      }
    }
  };
  visit('', 0);
  return { files: files.sort(), nested: nested.sort() };
}

import { statSync } from 'node:fs';
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

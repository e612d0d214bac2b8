/**
 * The access policy without a restart (docs/trust.md): `.env` and the agent files are watched, and `SIGHUP` reads
 * them too; a configuration that reads cleanly is handed to `apply` (the bridge puts its access policy, DM_POLICY and
 * approvals into force), one that does not is logged with its file and field and the policy in force stays.
 */
import { type FSWatcher, watch } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log.js';
import { type Config, environmentWithDotenv, loadConfig } from './load.js';

/** Editors write a file in several steps: one read after the last of them. */
const SETTLE_MS = 300;

export interface ConfigWatch {
  /** Reads the configuration again now (SIGHUP does the same); resolves with whether it was applied. */
  reload(): boolean;
  close(): void;
}

export function watchConfig(options: {
  readonly cwd: string;
  /** The process's own environment (it wins over `.env`, as at start). */
  readonly env: NodeJS.ProcessEnv;
  readonly agentsDir: string;
  readonly apply: (config: Config) => void;
  readonly log: Logger;
}): ConfigWatch {
  const { cwd, env, log } = options;
  let timer: NodeJS.Timeout | undefined;
  const reload = (): boolean => {
    let config: Config;
    try {
      config = loadConfig(environmentWithDotenv(cwd, env), cwd);
    } catch (error) {
      log.warn({ err: error }, 'the configuration changed but does not read: the access policy in force stays');
      return false;
    }
    options.apply(config);
    log.info('the access policy and approvals were read again from the settings and agent files');
    return true;
  };
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(reload, SETTLE_MS);
    timer.unref();
  };
  const watchers: FSWatcher[] = [];
  const watchDir = (dir: string, wanted: (name: string) => boolean) => {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (name && wanted(name.toString())) soon();
      });
      watcher.on('error', (error) => log.warn({ err: error, dir }, 'stopped watching a configuration folder'));
      watchers.push(watcher);
    } catch (error) {
      log.warn({ err: error, dir }, 'cannot watch a configuration folder: changes there need a restart or SIGHUP');
    }
  };
  watchDir(cwd, (name) => name === '.env');
  watchDir(path.resolve(cwd, options.agentsDir), (name) => name.endsWith('.md'));
  const hangUp = () => soon();
  process.on('SIGHUP', hangUp);
  return {
    reload,
    close: () => {
      clearTimeout(timer);
      process.off('SIGHUP', hangUp);
      for (const watcher of watchers) watcher.close();
    },
  };
}

/** The watch of a running bridge: its folder, its own environment (which wins over `.env`), its agents' folder. */
export function watchRunning(
  run: { readonly cwd?: string | undefined; readonly env?: NodeJS.ProcessEnv | undefined },
  agentsDir: string,
  log: Logger,
  apply: (config: Config) => void,
): ConfigWatch {
  return watchConfig({ cwd: run.cwd ?? process.cwd(), env: run.env ?? process.env, agentsDir, log, apply });
}

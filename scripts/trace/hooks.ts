/**
 * Module hooks (registered with `module.register` after tsx's): every module loaded from the project's own folders
 * is instrumented once the TypeScript loader has turned it into JavaScript. Dependencies and test code are not.
 */
import type { InitializeHook, LoadHook } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MessagePort } from 'node:worker_threads';
import { type InstrumentOptions, instrument } from './instrument.js';

export interface HooksData {
  /** The project's root folder. */
  readonly root: string;
  /** Folders under the root whose modules are instrumented (e.g. `src`, `adapters`). */
  readonly folders: readonly string[];
  /** Told `{ file, functions, enclosed }` for each module instrumented (a count, and names). */
  readonly port: MessagePort;
  /** What more is recorded in some files (by project-relative path): see `InstrumentOptions`. */
  readonly options?: Readonly<Record<string, InstrumentOptions>>;
}

let settings: HooksData | undefined;

export const initialize: InitializeHook<HooksData> = (data) => {
  settings = data;
};

/** The module's path relative to the root when it is one of the project's own, else undefined. */
export function projectFile(url: string, data: Pick<HooksData, 'root' | 'folders'>): string | undefined {
  if (!url.startsWith('file:')) return undefined;
  const file = path.relative(data.root, fileURLToPath(url)).split(path.sep).join('/');
  if (file.startsWith('..') || file.split('/').includes('node_modules')) return undefined;
  if (!/\.(ts|mts|js|mjs)$/.test(file) || file.endsWith('.d.ts')) return undefined;
  return data.folders.some((folder) => file.startsWith(`${folder}/`)) ? file : undefined;
}

export const load: LoadHook = async (url, context, nextLoad) => {
  const loaded = await nextLoad(url, context);
  const file = settings ? projectFile(url, settings) : undefined;
  if (!settings || !file || loaded.format !== 'module' || loaded.source === undefined || loaded.source === null) {
    return loaded;
  }
  const code = typeof loaded.source === 'string' ? loaded.source : new TextDecoder().decode(loaded.source);
  const instrumented = instrument(code, file, settings.options?.[file]);
  settings.port.postMessage({ file, functions: instrumented.functions.length, enclosed: instrumented.enclosed });
  return { ...loaded, source: instrumented.code };
};

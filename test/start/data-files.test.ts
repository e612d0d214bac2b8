import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { userLabel } from '../../src/file-access.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { startBridgeProcess } from '../helpers/bridge-process.js';
import { builtBridge } from '../helpers/built-bridge.js';

/**
 * Files the bridge must write, made unwritable for it. Tests run as root here, and root writes any
 * file whatever its mode; so the bridge runs as another user (nobody) and the files are root's, as
 * one `sudo npm start` leaves them. Run as an ordinary user, the files are made read-only instead.
 */
const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const child = asRoot ? { uid: NOBODY, gid: NOBODY } : {};

let llm: FakeOpenAI;
let dir: string;
let data: string;
beforeAll(async () => {
  builtBridge();
  llm = await startFakeOpenAI();
}, 600_000);
afterAll(() => llm.close());
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-files-'));
  chmodSync(dir, 0o755);
  mkdirSync(path.join(dir, 'agents'));
  writeFileSync(path.join(dir, 'agents', 'echo.md'), '---\nname: echo\nmodel: echo\n---\nYou echo.\n');
  data = path.join(dir, 'data');
  mkdirSync(data);
  chmodSync(data, 0o777); // the folder is the bridge's to write: only the files in it are not
  return () => rmSync(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  OPENAI_BASE_URL: llm.baseURL,
  SANDBOX_IMAGE: 'absent-image:none',
  ...extra,
});

/** A file the bridge may not write: root's (the bridge runs as nobody), or read-only. */
function unwritableFile(file: string, content = ''): void {
  writeFileSync(file, content);
  chmodSync(file, asRoot ? 0o644 : 0o444);
}

/** What the line says of such a file; `folder` is what the fix hands back. */
function ownerWords(file: string, folder?: string): string {
  if (!asRoot) return `is read-only for its owner ${userLabel(userInfo().uid)} (mode 444): chmod u+w ${file}`;
  const fix = folder ? `sudo chown -R ${NOBODY}:${NOBODY} ${folder}` : `sudo chown ${NOBODY}:${NOBODY} ${file}`;
  return `belongs to root (uid 0), and this bridge runs as ${userLabel(NOBODY)}: ${fix}`;
}

/** `npm start` with a pipe for input that never brings a line: it must stop before the room opens. */
const start = (extra: Record<string, string> = {}) =>
  startBridgeProcess({ cwd: dir, env: env(extra), stdin: 'pipe', timeoutMs: 30_000, ...child }).exited;
const check = (extra: Record<string, string> = {}) =>
  startBridgeProcess({ cwd: dir, env: env(extra), args: ['--check'], timeoutMs: 60_000, ...child }).exited;

describe('a data folder with files this user may not write', () => {
  it.each(['roundtable.db', 'roundtable.db-wal', 'roundtable.db-shm'])(
    'refuses to start when %s belongs to another user, in one line naming the file and its owner',
    async (name) => {
      const file = path.join(data, name);
      unwritableFile(file);
      const { code, stdout, stderr } = await start();
      expect(stderr).toBe(`Configuration error: environment: DATA_DIR: ${file} ${ownerWords(file, data)}\n`);
      expect(code).toBe(1);
      expect(stdout).toBe(''); // the terminal room never opened
    },
  );

  it('says so in --check too, without mistaking a lock file it may not write for a running bridge', async () => {
    unwritableFile(path.join(data, 'roundtable.lock'));
    const { code, stdout } = await check();
    const lock = path.join(data, 'roundtable.lock');
    expect(stdout.split('\n')).toContain(`✗ data folder: DATA_DIR: ${lock} ${ownerWords(lock, data)}`);
    expect(stdout).not.toContain('a bridge is running on it');
    expect(code).toBe(1);
  });

  it('refuses a folder where the database should be', async () => {
    mkdirSync(path.join(data, 'roundtable.db'));
    const { code, stderr } = await start();
    expect(stderr).toBe(
      `Configuration error: environment: DATA_DIR: ${path.join(data, 'roundtable.db')} is a folder, not a file: move it out of the way\n`,
    );
    expect(code).toBe(1);
  });
});

describe('a log file that cannot be opened', () => {
  it('is one line naming LOG_FILE when it belongs to another user, never a stack trace', async () => {
    const log = path.join(dir, 'bridge.log');
    unwritableFile(log, 'an older run\n');
    const { code, stderr } = await start({ LOG_FILE: log });
    expect(stderr).toBe(`Configuration error: environment: LOG_FILE: ${log} ${ownerWords(log)}\n`);
    expect(code).toBe(1);
  });

  it('is one line naming LOG_FILE when it is a folder, or under a file', async () => {
    mkdirSync(path.join(dir, 'logs'));
    const folder = await start({ LOG_FILE: path.join(dir, 'logs') });
    expect(folder.stderr).toBe(
      `Configuration error: environment: LOG_FILE: ${path.join(dir, 'logs')} is a folder, not a file: move it out of the way\n`,
    );
    expect(folder.code).toBe(1);

    const under = path.join(dir, 'agents', 'echo.md', 'bridge.log');
    const file = await start({ LOG_FILE: under });
    expect(file.stderr).toBe(
      `Configuration error: environment: LOG_FILE: ${under} cannot be made: ${path.join(dir, 'agents', 'echo.md')} is a file, not a folder\n`,
    );
    expect(file.code).toBe(1);
  });

  it('is a ✗ line of --check, naming LOG_FILE and the owner', async () => {
    const log = path.join(dir, 'bridge.log');
    unwritableFile(log);
    const { code, stdout } = await check({ LOG_FILE: log });
    expect(stdout.split('\n')).toContain(`✗ log file: LOG_FILE: ${log} ${ownerWords(log)}`);
    expect(code).toBe(1);
  });
});

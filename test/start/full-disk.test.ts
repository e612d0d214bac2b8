import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockDataDir } from '../../src/data-dir.js';
import { selfCheck } from '../../src/startup-check.js';
import { openStore } from '../../src/store/sqlite/store.js';

const errorOf = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-disk-'));
  return () => rmSync(dir, { recursive: true, force: true });
});

describe('a database another process holds at start', () => {
  it('names the file and suggests another bridge on the same DATA_DIR', () => {
    const file = path.join(dir, 'roundtable.db');
    const other = new Database(file);
    try {
      other.exec('CREATE TABLE held (x); BEGIN EXCLUSIVE; INSERT INTO held VALUES (1);');
      expect(errorOf(() => openStore(file)).message).toBe(
        `${file} is locked by another process: most likely another Roundtable bridge on the same DATA_DIR ` +
          '(in a container, or on a machine sharing the folder) or a tool holding it open (sqlite3); ' +
          'stop it, or give this bridge its own DATA_DIR',
      );
    } finally {
      other.close();
    }
  });
});

/** A file system of `size` KiB with `free` KiB left, mounted at `dir` (root only: a tmpfs mount). */
function nearlyFull(size: number, free: number): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}k`, 'rt-full-disk', dir]);
  writeFileSync(path.join(dir, 'filler'), Buffer.alloc((size - free) * 1024));
}

describe.runIf(process.getuid?.() === 0)('a nearly full disk at start', () => {
  afterEach(() => {
    execFileSync('umount', [dir]);
  });

  it('names the file that could not be written and the space left, not just "disk I/O error"', () => {
    nearlyFull(256, 32);
    const file = path.join(dir, 'roundtable.db');
    expect(errorOf(() => openStore(file)).message).toMatch(
      new RegExp(
        `^${file} cannot be written \\((disk I/O error|database or disk is full)\\): the file system holding it has ` +
          '\\d+ KiB free; free some space, or move DATA_DIR to a larger disk$',
      ),
    );
  });

  it('says so when even the lock file cannot be written', () => {
    nearlyFull(256, 8);
    expect(errorOf(() => lockDataDir(dir)).message).toMatch(
      new RegExp(
        `^environment: DATA_DIR: cannot lock ${dir}/roundtable.lock: database or disk is full: the file system ` +
          'holding it has \\d+ KiB free; free some space, or move DATA_DIR to a larger disk$',
      ),
    );
  });

  it('--check fails the data folder with the free space, rather than calling it writable', async () => {
    nearlyFull(256, 32);
    const lines: string[] = [];
    const passed = await selfCheck({
      env: { DATA_DIR: dir, AGENTS_DIR: path.join(dir, 'no-agents') },
      cwd: dir,
      probes: { docker: async () => [], discord: async () => [], slack: async () => [] },
      write: (line) => lines.push(line),
    });
    expect(passed).toBe(false);
    expect(lines.find((line) => line.includes('data folder'))).toMatch(
      new RegExp(
        `^✗ data folder: DATA_DIR: ${dir} has only \\d+ KiB free: the database needs room to grow ` +
          '\\(a new one takes about 0.6 MB, and every message adds to it\\); free some space, or move DATA_DIR to a larger disk$',
      ),
    );
  });
});

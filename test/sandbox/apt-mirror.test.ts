import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = path.resolve('sandbox/build-offline-image.sh');
const roots: string[] = [];

/** Runs the build script's mirror lookup against a fake /etc/apt made of the given files. */
function printMirror(files: Record<string, string>, env: Record<string, string> = {}) {
  const aptEtc = mkdtempSync(path.join(tmpdir(), 'roundtable-apt-'));
  roots.push(aptEtc);
  mkdirSync(path.join(aptEtc, 'sources.list.d'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(aptEtc, name), text);
  const result = spawnSync('bash', [SCRIPT, '--print-mirror'], {
    env: { PATH: process.env.PATH ?? '', APT_ETC: aptEtc, ...env },
    encoding: 'utf8',
  });
  return { status: result.status, mirror: result.stdout.trim(), error: result.stderr.trim() };
}

afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

describe('Debian mirror from the apt sources', () => {
  it('reads the bookworm URI from deb822 .sources, not the security suite', () => {
    const sources = [
      'Types: deb',
      'URIs: http://security.example.org/debian-security',
      'Suites: bookworm-security',
      'Components: main',
      '',
      'Types: deb deb-src',
      '# a comment inside the stanza',
      'URIs: http://mirror.example.org/debian',
      'Suites: bookworm bookworm-updates',
      'Components: main',
    ].join('\n');
    expect(printMirror({ 'sources.list.d/debian.sources': sources })).toMatchObject({
      status: 0,
      mirror: 'http://mirror.example.org/debian',
    });
  });

  it('skips disabled stanzas and deb-src-only ones', () => {
    const sources = [
      'Types: deb',
      'URIs: http://disabled.example.org/debian',
      'Suites: bookworm',
      'Enabled: no',
      '',
      'Types: deb-src',
      'URIs: http://sources.example.org/debian',
      'Suites: bookworm',
      '',
      'Types: deb',
      'URIs: https://good.example.org/debian',
      'Suites: bookworm',
    ].join('\n');
    expect(printMirror({ 'sources.list.d/x.sources': sources }).mirror).toBe('https://good.example.org/debian');
  });

  it('reads one-line sources.list entries, options included', () => {
    const list = [
      '# deb http://commented.example.org/debian bookworm main',
      'deb-src http://src.example.org/debian bookworm main',
      'deb http://security.example.org/debian-security bookworm-security main',
      'deb [arch=amd64 signed-by=/usr/share/keyrings/debian.gpg] http://one.example.org/debian bookworm main contrib',
    ].join('\n');
    expect(printMirror({ 'sources.list': list }).mirror).toBe('http://one.example.org/debian');
  });

  it('ignores files that are neither .list nor .sources and other suites', () => {
    const result = printMirror({
      'sources.list.d/old.list.disabled': 'deb http://off.example.org/debian bookworm main\n',
      'sources.list.d/nodesource.sources': 'Types: deb\nURIs: https://deb.example.com/node_20.x\nSuites: nodistro\n',
    });
    expect(result.status).not.toBe(0);
    expect(result.mirror).toBe('');
    expect(result.error).toMatch(/no deb source for bookworm/);
  });

  it('lets SANDBOX_MIRROR and SANDBOX_SUITE override', () => {
    const list =
      'deb http://trixie.example.org/debian trixie main\ndeb http://bookworm.example.org/debian bookworm main\n';
    expect(printMirror({ 'sources.list': list }, { SANDBOX_SUITE: 'trixie' }).mirror).toBe(
      'http://trixie.example.org/debian',
    );
    expect(printMirror({ 'sources.list': list }, { SANDBOX_MIRROR: 'http://override.example.org/debian' }).mirror).toBe(
      'http://override.example.org/debian',
    );
  });
});

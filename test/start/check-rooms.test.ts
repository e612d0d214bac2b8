import { createReadStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeEach, describe, expect, it } from 'vitest';
import { selfCheck } from '../../src/startup-check.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-check-rooms-'));
  mkdirSync(path.join(dir, 'agents'));
  writeFileSync(path.join(dir, 'agents', 'data.md'), '---\nname: data\nmodel: m\n---\nYou are data.\n');
  return () => rmSync(dir, { recursive: true, force: true });
});

async function roomsLine(options: { stdin?: NodeJS.ReadableStream & { isTTY?: boolean }; inContainer?: boolean }) {
  const lines: string[] = [];
  await selfCheck({
    env: { OPENAI_API_KEY: 'sk-rooms-check', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
    cwd: dir,
    probes: { docker: async () => [], discord: async () => [], slack: async () => [] },
    write: (line) => lines.push(line),
    ...options,
  });
  return lines.find((line) => line.includes(' rooms: '));
}

const NOTHING =
  'rooms: Nothing to serve: no agent in ./agents has Discord or Slack tokens, and standard input ended before the ' +
  'terminal room got a line.';

describe('--check: the rooms line with no platform tokens', () => {
  it('fails where standard input is already over (/dev/null: compose, systemd, nohup), saying what to set', async () => {
    const line = await roomsLine({ stdin: createReadStream('/dev/null'), inContainer: false });
    expect(line?.startsWith(`✗ ${NOTHING} Add discord: { token_env: DISCORD_TOKEN_DATA }`)).toBe(true);
  });

  it('fails in a container with no terminal, as the compose service runs (docker compose run -T)', async () => {
    const line = await roomsLine({ stdin: new PassThrough(), inContainer: true });
    expect(line).toMatch(/^✗ rooms: the terminal room only, in a container with no terminal \(as docker compose up/);
    expect(line).toContain('Add discord: { token_env: DISCORD_TOKEN_DATA }');
  });

  it('passes at a terminal, where the terminal room is what npm start opens', async () => {
    const tty = Object.assign(createReadStream('/dev/null'), { isTTY: true });
    const line = await roomsLine({ stdin: tty, inContainer: false });
    tty.destroy();
    expect(line).toMatch(/^✓ rooms: the terminal room only/);
  });
});

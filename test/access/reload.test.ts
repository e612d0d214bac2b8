/**
 * The access policy without a restart (docs/trust.md): a change to `.env` or an agent file, or SIGHUP, is read
 * again and put into force; a configuration that does not read is logged and the policy in force stays.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { type ConfigWatch, watchConfig } from '../../src/config/watch.js';
import { createLogger } from '../../src/log.js';

let dir: string;
let watcher: ConfigWatch | undefined;
const applied: Config[] = [];
const warnings: string[] = [];

const env = { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', OPENAI_API_KEY: 'sk-test' };
const writeEnv = (text: string) => writeFileSync(path.join(dir, '.env'), text);
const writeAgent = (front: string) =>
  writeFileSync(
    path.join(dir, 'agents', 'code.md'),
    `---\nname: code\nmodel: gpt-4o-mini\n${front}\n---\nYou write code.\n`,
  );

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-reload-'));
  mkdirSync(path.join(dir, 'agents'));
  writeEnv('ACCESS_USERS=U1\n');
  writeAgent('tools: [bash]');
  applied.length = 0;
  warnings.length = 0;
  const log = createLogger({ level: 'info', format: 'json' });
  vi.spyOn(log, 'warn').mockImplementation(((obj: unknown, msg?: string) => {
    warnings.push(`${msg ?? ''} ${String((obj as { err?: Error }).err?.message ?? '')}`);
  }) as never);
  watcher = watchConfig({ cwd: dir, env, agentsDir: 'agents', log, apply: (c) => applied.push(c) });
});
afterEach(() => {
  watcher?.close();
  rmSync(dir, { recursive: true, force: true });
});

const last = () => applied.at(-1);

describe('the access policy read again without a restart', () => {
  it('applies a changed .env', async () => {
    writeEnv('ACCESS_USERS=U1,U2\nDM_POLICY=off\n');
    await vi.waitFor(() => expect(last()?.settings.ACCESS_USERS).toEqual(['U1', 'U2']), { timeout: 20_000 });
    expect(last()?.settings.DM_POLICY).toBe('off');
  });

  it("applies a changed agent file's approvals and access", async () => {
    writeAgent("tools: [bash]\napprovals: { bash: ask }\naccess: { users: ['U9'] }");
    await vi.waitFor(() => expect(last()?.agents[0]?.approvals?.modes.get('bash')).toBe('ask'), { timeout: 20_000 });
    expect(last()?.agents[0]?.access?.users).toEqual(['U9']);
  });

  it('keeps the policy in force when the change does not read, and says which field', async () => {
    writeEnv('DM_POLICY=sometimes\n');
    await vi.waitFor(() => expect(warnings.join('\n')).toMatch(/does not read.*DM_POLICY/), { timeout: 20_000 });
    expect(applied).toEqual([]);
  });

  it('reads again on SIGHUP', async () => {
    process.emit('SIGHUP', 'SIGHUP');
    await vi.waitFor(() => expect(last()?.settings.ACCESS_USERS).toEqual(['U1']), { timeout: 20_000 });
  });
});

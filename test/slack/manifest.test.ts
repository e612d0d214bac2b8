import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildManifest } from '../../adapters/slack/manifest.js';
import { manifestAgent } from '../../adapters/slack/manifest-cli.js';

const dir = mkdtempSync(path.join(tmpdir(), 'slack-manifest-'));
const agentFile = (name: string, slack: string) => `---\nname: ${name}\nmodel: m\n${slack}---\nYou are ${name}.\n`;
writeFileSync(path.join(dir, '1-data.md'), agentFile('data', 'slack:\n  bot_token_env: A\n  app_token_env: B\n'));
writeFileSync(
  path.join(dir, '2-code.md'),
  agentFile('code', 'slack:\n  bot_token_env: C\n  signing_secret_env: D\n  control: true\n'),
);
writeFileSync(
  path.join(dir, '3-reviewer.md'),
  agentFile('reviewer', 'slack:\n  bot_token_env: E\n  app_token_env: F\n'),
);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Slack app manifest', () => {
  it('gives the control app the slash commands and the commands scope, and the others neither', () => {
    const control = buildManifest({ name: 'data', control: true, socketMode: true });
    const other = buildManifest({ name: 'code', control: false, socketMode: true });

    expect(control).toMatchObject({
      features: { bot_user: { display_name: 'data' } },
      settings: {
        socket_mode_enabled: true,
        event_subscriptions: { bot_events: expect.arrayContaining(['message.im', 'app_mention']) },
      },
    });
    expect(
      (control.features as { slash_commands: Array<{ command: string }> }).slash_commands.map((c) => c.command),
    ).toEqual(['/pass', '/reset', '/status', '/privacy']);
    expect(JSON.stringify(control)).toContain('"commands"');
    expect(other.features).not.toHaveProperty('slash_commands');
    expect(JSON.stringify(other)).not.toContain('"commands"');
  });

  it('sets the request URL for an HTTP-mode app instead of Socket Mode', () => {
    const manifest = buildManifest({
      name: 'code',
      control: true,
      socketMode: false,
      requestUrl: 'https://h/slack/events/code',
    });
    expect(manifest.settings).toMatchObject({
      socket_mode_enabled: false,
      event_subscriptions: { request_url: 'https://h/slack/events/code' },
    });
    expect(JSON.stringify(manifest.features)).toContain('https://h/slack/events/code');
  });

  it('reads mode and control from the agent files, without tokens', () => {
    expect(manifestAgent(dir, 'CODE', 'https://h/x')).toEqual({
      name: 'code',
      control: true,
      socketMode: false,
      requestUrl: 'https://h/x',
    });
    expect(manifestAgent(dir, 'reviewer')).toMatchObject({ name: 'reviewer', control: false, socketMode: true });
    expect(() => manifestAgent(dir, 'nobody')).toThrow(/no agent named "nobody"/);
  });
});

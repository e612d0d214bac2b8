import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildManifest } from '../../adapters/slack/manifest.js';
import { MANIFEST_USAGE, manifestAgent, manifestMain } from '../../adapters/slack/manifest-cli.js';

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
    ).toEqual(['/pass', '/reset', '/status', '/privacy', '/budget', '/access', '/pair', '/approve', '/deny']);
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

  // A new user prints the manifests first: no agent file has Slack keys yet, no token exists.
  const fresh = mkdtempSync(path.join(tmpdir(), 'slack-manifest-fresh-'));
  mkdirSync(path.join(fresh, 'agents'));
  for (const name of ['code', 'data', 'reviewer']) {
    writeFileSync(path.join(fresh, 'agents', `${name}.md`), agentFile(name, ''));
  }
  afterAll(() => rmSync(fresh, { recursive: true, force: true }));

  const cli = (argv: string[], cwd = fresh) => {
    let out = '';
    let err = '';
    const code = manifestMain(argv, { out: (t) => (out += t), err: (t) => (err += t), cwd, env: {} });
    return { code, out, err };
  };
  const commandsOf = (json: string) =>
    (
      (JSON.parse(json) as { features: { slash_commands?: Array<{ command: string }> } }).features.slash_commands ?? []
    ).map((c) => c.command);

  it('gives the commands to one app only before any agent has Slack keys', () => {
    expect(commandsOf(cli(['code', '--json']).out)).toEqual([
      '/pass',
      '/reset',
      '/status',
      '/privacy',
      '/budget',
      '/access',
      '/pair',
      '/approve',
      '/deny',
    ]);
    expect(commandsOf(cli(['data', '--json']).out)).toEqual([]);
    expect(commandsOf(cli(['reviewer', '--json']).out)).toEqual([]);
    // `control: true` in a file picks that agent instead.
    writeFileSync(path.join(fresh, 'agents', 'data.md'), agentFile('data', 'control: true\n'));
    expect(commandsOf(cli(['data', '--json']).out)).toHaveLength(9);
    expect(commandsOf(cli(['code', '--json']).out)).toEqual([]);
    writeFileSync(path.join(fresh, 'agents', 'data.md'), agentFile('data', ''));
  });

  it('warns in one line, on stderr, when it prints a manifest without the commands while no agent file marks the control app', () => {
    const data = cli(['data', '--json']);
    expect(data.code).toBe(0);
    expect(data.err).toBe(
      `slack:manifest: warning: no agent file sets control: true, so the slash commands go to @code's app, not @data's; mark the control app with "control: true" in its agent file, then print the manifests again\n`,
    );
    expect(JSON.parse(data.out)).toHaveProperty('features'); // the manifest itself is still printed, and alone on stdout
    expect(cli(['code', '--json']).err).toBe('');
    // Once a file marks the control app (at the top of its front matter, before it has Slack keys), nothing is left
    // to guess.
    writeFileSync(path.join(fresh, 'agents', 'reviewer.md'), agentFile('reviewer', 'control: true\n'));
    try {
      expect(cli(['data']).err).toBe('');
      expect(commandsOf(cli(['reviewer', '--json']).out)).toHaveLength(9);
    } finally {
      writeFileSync(path.join(fresh, 'agents', 'reviewer.md'), agentFile('reviewer', ''));
    }
  });

  it('switches to HTTP mode with --request-url: events, interactivity and commands go to that URL', () => {
    const url = 'https://bots.example.org/slack/events/code';
    const { code, out } = cli(['code', '--request-url', url, '--json']);
    expect(code).toBe(0);
    const manifest = JSON.parse(out) as {
      settings: Record<string, unknown>;
      features: { slash_commands: Array<{ url: string }> };
    };
    expect(manifest.settings).toMatchObject({
      socket_mode_enabled: false,
      event_subscriptions: { request_url: url },
      interactivity: { is_enabled: true, request_url: url },
    });
    expect(manifest.features.slash_commands.map((c) => c.url)).toEqual(Array(9).fill(url));
    // Socket Mode too: without Interactivity on, Slack sends no click on a card's buttons.
    expect(JSON.parse(cli(['data', '--json']).out).settings).toMatchObject({
      socket_mode_enabled: true,
      interactivity: { is_enabled: true },
    });
  });

  it('says why --request-url cannot apply, with the usage exit code', () => {
    const sameDir = mkdtempSync(path.join(tmpdir(), 'slack-manifest-socket-'));
    try {
      mkdirSync(path.join(sameDir, 'agents'));
      writeFileSync(
        path.join(sameDir, 'agents', 'data.md'),
        agentFile('data', 'slack:\n  bot_token_env: A\n  app_token_env: B\n'),
      );
      const refused = cli(['data', '--request-url', 'https://h/slack/events/data'], sameDir);
      expect(refused.code).toBe(2);
      expect(refused.err).toBe(
        `slack:manifest: --request-url: ${path.join(sameDir, 'agents', 'data.md')} sets slack.app_token_env, so @data uses Socket Mode; for HTTP mode remove app_token_env and set signing_secret_env\n${MANIFEST_USAGE}\n`,
      );
      expect(cli(['data', '--request-url', 'http://plain/x']).err).toMatch(/Slack only calls https:\/\/ URLs/);
    } finally {
      rmSync(sameDir, { recursive: true, force: true });
    }
  });

  it('uses the exit codes every script uses: 2 for the command line, 1 for configuration', () => {
    expect(cli([]).code).toBe(2);
    expect(cli(['code', '--yaml']).err).toMatch(/^slack:manifest: unknown option --yaml\n/);
    expect(cli(['code', '--yaml']).code).toBe(2);
    expect(cli(['nobody']).code).toBe(1);
    expect(cli(['nobody']).err).toMatch(/^slack:manifest failed: .*no agent named "nobody"/);
    expect(cli(['--help']).code).toBe(0);
  });
});

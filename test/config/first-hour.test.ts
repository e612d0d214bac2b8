import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { environmentWithDotenv, loadConfig, readSettings } from '../../src/config/index.js';
import { startupWarnings } from '../../src/main.js';
import { configErrorOf } from '../helpers/config.js';

let dir: string;
const write = (name: string, text: string) => {
  mkdirSync(path.dirname(path.join(dir, 'agents', name)), { recursive: true });
  writeFileSync(path.join(dir, 'agents', name), text);
};
const agent = (front: string) => `---\n${front}\n---\nYou are helpful.\n`;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-first-hour-'));
  mkdirSync(path.join(dir, 'agents'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('.env as a new user saves it', () => {
  it('reads the first setting of a file saved with a byte-order mark', () => {
    writeFileSync(path.join(dir, '.env'), '\uFEFFOPENAI_API_KEY=sk-first\nLOG_LEVEL=warn\n');
    expect(environmentWithDotenv(dir, {})).toEqual({ OPENAI_API_KEY: 'sk-first', LOG_LEVEL: 'warn' });
  });

  it('refuses a quote that is never closed, naming the line, rather than keeping the quote', () => {
    writeFileSync(path.join(dir, '.env'), 'LOG_LEVEL=warn\nOPENAI_API_KEY="sk-open\nDATA_DIR=./data\n');
    expect(configErrorOf(() => environmentWithDotenv(dir, {})).message).toBe(
      `${path.join(dir, '.env')}:2: OPENAI_API_KEY: the value opens a " quote that is never closed (close it on the same line, or drop it)`,
    );
    writeFileSync(path.join(dir, '.env'), 'LOG_LEVEL=warn\n"OPENAI_API_KEY=sk-x\n');
    expect(configErrorOf(() => environmentWithDotenv(dir, {})).message).toBe(
      `${path.join(dir, '.env')}:2: "OPENAI_API_KEY: is not a variable name (letters, digits and _; quote the value, not the name)`,
    );
  });
});

describe('folders', () => {
  it('expands ~ in DATA_DIR, AGENTS_DIR and LOG_FILE to the home folder, and refuses ~name', () => {
    const settings = readSettings({ DATA_DIR: '~/roundtable', AGENTS_DIR: '~', LOG_FILE: '~/rt.log' });
    expect(settings.DATA_DIR).toBe(path.join(homedir(), 'roundtable'));
    expect(settings.AGENTS_DIR).toBe(homedir());
    expect(settings.LOG_FILE).toBe(path.join(homedir(), 'rt.log'));
    expect(configErrorOf(() => readSettings({ DATA_DIR: '~bob/data' })).message).toBe(
      'environment: DATA_DIR: only ~ and ~/ (your home folder) are expanded: write the full path (got "~bob/data")',
    );
  });

  it('says AGENTS_DIR names a file, not a folder', () => {
    writeFileSync(path.join(dir, 'one-agent.md'), agent('name: alpha\nmodel: m'));
    expect(configErrorOf(() => loadConfig({ AGENTS_DIR: 'one-agent.md' }, dir)).message).toBe(
      `environment: AGENTS_DIR: ${path.join(dir, 'one-agent.md')} is a file: name the folder that holds the agent files`,
    );
  });

  it('warns of agent files in subfolders, naming them, since only the folder itself is read', () => {
    write('alpha.md', agent('name: alpha\nmodel: m'));
    write('team/beta.md', agent('name: beta\nmodel: m'));
    write('team/deep/gamma.md', agent('name: gamma\nmodel: m'));
    const config = loadConfig({}, dir);
    expect(config.agents.map((a) => a.name)).toEqual(['alpha']);
    expect(config.warnings).toEqual([
      'agent files in subfolders of ./agents are not read: team/beta.md, team/deep/gamma.md (move them up to use them)',
    ]);
    // Said at start (log and terminal room) as well.
    expect(startupWarnings({ ...config, agents: [] })).toEqual(config.warnings);
  });
});

describe('a misspelt sandbox setting', () => {
  it('is named in a warning with the setting it may mean, since it is not read', () => {
    writeFileSync(path.join(dir, 'agents', 'alpha.md'), agent('name: alpha\nmodel: m'));
    const config = loadConfig({ SANDBOX_MEMROY: '1g', SANDBOX_MEMORY: '512m', SANDBOX_CPUS: '1' }, dir);
    expect(config.warnings).toEqual([
      'SANDBOX_MEMROY is not a setting, so it is not read (did you mean SANDBOX_MEMORY? .env.example lists them all)',
    ]);
  });
});

describe('agent files', () => {
  it('trims spaces around the model name', () => {
    write('alpha.md', agent('name: alpha\nmodel: "gpt-4o-mini "'));
    expect(loadConfig({}, dir).agents[0]?.model).toBe('gpt-4o-mini');
  });

  it.each([
    ['user', 'the terminal room shows the person typing as [user]'],
    ['human', 'the bridge hands control back to the people as @human'],
    ['system', "the bridge's own lines are [system]"],
    ['everyone', '@everyone pings a whole Discord server'],
    ['here', '@here pings everyone online in a Discord or Slack channel'],
  ])('refuses the name "%s" with the reason', (name, reason) => {
    write('a.md', agent(`name: ${name[0]?.toUpperCase()}${name.slice(1)}\nmodel: m`));
    expect(configErrorOf(() => loadConfig({}, dir)).message).toBe(
      `agents/a.md: name: "${name[0]?.toUpperCase()}${name.slice(1)}" is reserved: ${reason}, so an agent of that name could not be told apart`,
    );
  });
});

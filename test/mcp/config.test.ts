/**
 * `mcp:` in agent files: stdio and Streamable HTTP servers, `${VAR}` values read from the environment (and made
 * secrets), `run: sandbox` by default, and every mistake naming the file and field; `approvals:` takes the servers'
 * tools by name and whole servers as `server__*`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { modeFor } from '../../src/access/approval-rules.js';
import { loadConfig } from '../../src/config/index.js';
import { configErrorOf } from '../helpers/config.js';

let dir: string;
const write = (front: string) =>
  writeFileSync(path.join(dir, 'agents', 'code.md'), `---\nname: code\nmodel: m\n${front}\n---\nYou code.\n`);
const load = (env: Record<string, string> = {}) => loadConfig(env, dir);

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-mcp-config-'));
  mkdirSync(path.join(dir, 'agents'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('mcp: in agent files', () => {
  it('reads stdio and HTTP servers, with $VAR references from the environment as secrets', () => {
    write(
      [
        'mcp:',
        '  - name: files',
        '    command: npx',
        '    args: [-y, server-filesystem, /workspace]',
        '  - name: tracker',
        '    command: tracker-mcp',
        `    env: { TOKEN: "\${TRACKER_TOKEN}", MODE: plain }`,
        '    run: host',
        '    timeout_s: 5',
        '    price_usd_per_call: 0.002',
        '  - name: search',
        '    url: https://search.example.com/mcp',
        '    price_usd_per_call: 0',
        `    headers: { Authorization: "Bearer \${SEARCH_TOKEN}" }`,
      ].join('\n'),
    );
    const config = load({ TRACKER_TOKEN: 'tr-secret-1', SEARCH_TOKEN: 'se-secret-2' });
    expect(config.agents[0]?.mcp).toEqual([
      {
        kind: 'stdio',
        name: 'files',
        command: 'npx',
        args: ['-y', 'server-filesystem', '/workspace'],
        env: {},
        run: 'sandbox',
      },
      {
        kind: 'stdio',
        name: 'tracker',
        command: 'tracker-mcp',
        args: [],
        env: { TOKEN: 'tr-secret-1', MODE: 'plain' },
        run: 'host',
        timeoutMs: 5000,
        priceUsdPerCall: 0.002,
      },
      {
        kind: 'http',
        name: 'search',
        url: 'https://search.example.com/mcp',
        headers: { Authorization: 'Bearer se-secret-2' },
        priceUsdPerCall: 0,
      },
    ]);
    expect(config.secrets).toEqual(expect.arrayContaining(['tr-secret-1', 'se-secret-2']));
  });

  it.each([
    ['  - name: a__b\n    command: x', 'mcp.0.name', /must not hold "__"/],
    ['  - name: "has space"\n    command: x', 'mcp.0.name', /letter/],
    ['  - name: a\n    command: x\n    url: http://h/mcp', 'mcp.0', /both url and command/],
    ['  - name: a', 'mcp.0', /needs command .* or url/],
    ['  - name: a\n    url: ftp://h/mcp', 'mcp.0.url', /http/],
    ['  - name: a\n    command: x\n    run: moon', 'mcp.0.run', /./],
    ['  - name: a\n    command: x\n    price_usd_per_call: -1', 'mcp.0.price_usd_per_call', /./],
    ['  - name: a\n    command: x\n    colour: red', 'mcp.0.colour', /unknown key/],
    ['  - name: a\n    command: x\n  - name: A\n    command: y', 'mcp.1.name', /already a server/],
    [`  - name: a\n    command: x\n    env: { K: "\${MISSING}" }`, 'mcp.0.env.K', /names MISSING, which is not set/],
  ])('names the file and field of a bad entry: %s', (entry, field, problem) => {
    write(`mcp:\n${entry}`);
    const error = configErrorOf(load);
    expect(error.file).toMatch(/code\.md$/);
    expect(error.field).toBe(field);
    expect(error.message).toMatch(problem);
  });

  it('approvals: takes a server tool by name and a whole server as server__*', () => {
    write(
      ['mcp:', '  - name: docs', '    command: x', 'approvals:', '  docs__search: off', '  docs__*: ask'].join('\n'),
    );
    const rules = load().agents[0]?.approvals;
    expect(modeFor(rules, 'docs__search', '{}').mode).toBe('off');
    expect(modeFor(rules, 'docs__write', '{}').mode).toBe('ask');
    expect(modeFor(rules, 'bash', 'ls').mode).toBe('off');
  });

  it('approvals: refuses a name of a server the agent does not have', () => {
    write(['mcp:', '  - name: docs', '    command: x', 'approvals:', '  other__search: ask'].join('\n'));
    const error = configErrorOf(load);
    expect(error.field).toBe('approvals.other__search');
    expect(error.message).toMatch(/server__tool \/ server__\* for docs/);
  });
});

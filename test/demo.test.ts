import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { RECORDED_OUTPUT } from '../src/demo/recorded-sandbox.js';
import { demo, replayReason } from '../src/demo.js';
import { SandboxError } from '../src/errors.js';

describe('npm run demo', () => {
  it('plays the example session in the terminal room, labelled as a demo', async () => {
    const out = new PassThrough();
    let printed = '';
    out.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    await demo(out);
    expect(printed).toMatch(/^\[system\]: DEMO: a local scripted model plays the example session/);
    expect(printed).toContain('[@user]: @data who are our top 3 customers by revenue in sales.csv?\n');
    expect(printed).toContain('[@data]: @code please load sales.csv');
    expect(printed).toMatch(/\[@code\] running: python3 -c .*\n\[result\]: Acme Corp,23202\.02\n/);
    expect(printed).toContain(
      '[@data]: Our top 3 customers: Acme Corp (23,202), Stark Industries (14,272), Globex (10,005). ' +
        'Acme Corp alone brings in 32% of revenue, and the top 3 together 66%.',
    );
    expect(printed).toMatch(/DEMO: end of the example session\.[^\n]*\n$/);
  }, 120_000);

  it('says Docker is not available when no engine answers, and still plays the session', async () => {
    const out = new PassThrough();
    let printed = '';
    out.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    // dockerode reads DOCKER_HOST when the sandbox is built.
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = 'unix:///nonexistent/docker.sock';
    try {
      await demo(out);
    } finally {
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
    expect(printed).toContain(
      "[system]: DEMO: @code's commands run in: recorded command output, because Docker is not available.\n",
    );
    expect(printed).toContain('[@data]: Our top 3 customers: Acme Corp (23,202)');
  }, 120_000);

  it('plays the session as well when the model is asked to stream (LLM_STREAM=true)', async () => {
    const out = new PassThrough();
    let printed = '';
    out.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = 'unix:///nonexistent/docker.sock';
    try {
      await demo(out, { ...process.env, LLM_STREAM: 'true' });
    } finally {
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
    expect(printed).toMatch(/\[@code\] running: python3 -c .*\n\[result\]: Acme Corp,23202\.02\n/);
    expect(printed).toContain('[@data]: Our top 3 customers: Acme Corp (23,202), Stark Industries (14,272)');
    expect(printed).not.toContain('[ERROR');
  }, 120_000);

  it('names a missing image as the reason, not Docker', () => {
    expect(replayReason(new SandboxError('x', { problem: 'image' }))).toBe(
      'the sandbox image is missing (npm run sandbox:build)',
    );
    expect(replayReason(new SandboxError('x', { problem: 'engine' }))).toBe('Docker is not available');
  });

  it('replays, without Docker, exactly what the command prints on the bundled sales.csv', () => {
    const csv = readFileSync(path.resolve(import.meta.dirname, '../sandbox/demo-workspace/sales.csv'), 'utf8');
    const totals = new Map<string, number>();
    for (const line of csv.trim().split('\n').slice(1)) {
      const [, customer = '', , amount = '0'] = line.split(',');
      totals.set(customer, (totals.get(customer) ?? 0) + Number(amount));
    }
    const top = [...totals].sort((a, b) => b[1] - a[1]).slice(0, 3);
    const sum = [...totals.values()].reduce((a, b) => a + b, 0);
    const expected = `${top.map(([c, v]) => `${c},${v.toFixed(2)}`).join('\n')}\nTOTAL,${sum.toFixed(2)}\n`;
    expect(RECORDED_OUTPUT).toBe(expected);
  });
});

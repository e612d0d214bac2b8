import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Dockerode from 'dockerode';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDockerSandbox } from '../../sandbox/index.js';
import { readSettings } from '../../src/config/index.js';
import { silentLogger } from '../../src/log.js';
import type { Inbound, InboundFile, Sandbox } from '../../src/ports.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { type Harness, newestOf, startHarness } from '../helpers/harness.js';
import { MemoryAdapter } from '../helpers/memory-adapter.js';
import { until } from '../helpers/until.js';
import { block, idsHidden } from '../helpers/untrusted.js';

let h: Harness;
let dir: string;
let sandbox: Sandbox;
/** The newest room message the agent was shown. */
const lastText = (request: RecordedRequest) => idsHidden(newestOf(request));

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-uploads-'));
  mkdirSync(path.join(dir, 'template'));
  writeFileSync(path.join(dir, 'template', 'README.txt'), 'seeded');
  // The Docker sandbox with no engine behind it: workspaces are plain folders under DATA_DIR all the same.
  sandbox = createDockerSandbox({
    settings: readSettings({ DATA_DIR: path.join(dir, 'data'), SANDBOX_TEMPLATE_DIR: path.join(dir, 'template') }),
    logger: silentLogger(),
    docker: new Dockerode({ socketPath: path.join(dir, 'no-docker.sock') }),
  });
});
afterEach(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A file whose download is counted, answering `content` (or failing with `error`). */
function file(name: string, content: string, extra: { size?: number; error?: string; mimeType?: string } = {}) {
  const counted = {
    downloads: 0,
    name,
    mimeType: extra.mimeType ?? 'text/csv',
    size: extra.size ?? Buffer.byteLength(content),
    async download(): Promise<Uint8Array> {
      counted.downloads += 1;
      if (extra.error) throw new Error(extra.error);
      return new TextEncoder().encode(content);
    },
  } satisfies InboundFile & { downloads: number };
  return counted;
}

let next = 0;
function upload(text: string, files: InboundFile[], platform = 'slack'): Inbound {
  next += 1;
  return {
    platform,
    channel: 'C1',
    messageId: `m${next}`,
    author: { id: 'u-alice', name: 'alice', kind: 'human' },
    text,
    files,
  };
}

async function start(env: Record<string, string> = {}): Promise<void> {
  h = await startHarness({
    agents: [{ name: 'code', activation: 'always' }],
    sandbox,
    adapters: [new MemoryAdapter('slack')], // a room on the platform whose size limit applies
    env: { SLACK_MAX_FILE_MB: '1', ...env },
  });
  h.llm.respond(() => ({ content: '[pass]' }));
}

async function receive(event: Inbound): Promise<void> {
  await h.bridge.sink.receive(event);
  await h.bridge.idle();
}

describe('uploads', () => {
  it("saves each file in the room's workspace under uploads/ and tells the agents where", async () => {
    await start();
    const csv = file('sales.csv', 'region,total\nnorth,5\n');
    await receive(upload('here are the numbers', [csv, file('notes.txt', 'hi', { mimeType: 'text/plain' })]));

    const workspace = sandbox.workspaceDir?.('slack:C1') ?? '';
    // The workspace this upload created is seeded from the template, like a container's first one.
    expect(readdirSync(workspace).sort()).toEqual(['README.txt', 'uploads']);
    expect(readFileSync(path.join(workspace, 'uploads', 'sales.csv'), 'utf8')).toBe('region,total\nnorth,5\n');
    expect(lastText(h.llm.requests[0] as RecordedRequest)).toBe(
      `[@alice]: here are the numbers\n${block('upload', '[file: uploads/sales.csv (text/csv, 21 B)]', '[file: uploads/notes.txt (text/plain, 2 B)]')}`,
    );
  });

  it('keeps an upload without a comment, and never overwrites a file already there', async () => {
    await start();
    await receive(upload('', [file('sales.csv', 'first')]));
    await receive(upload('', [file('../sales.csv', 'second')]));
    const uploads = path.join(sandbox.workspaceDir?.('slack:C1') ?? '', 'uploads');
    expect(readdirSync(uploads).sort()).toEqual(['sales-2.csv', 'sales.csv']);
    expect(readFileSync(path.join(uploads, 'sales-2.csv'), 'utf8')).toBe('second');
    expect(h.llm.requests.map(lastText)).toEqual([
      `[@alice]: ${block('upload', '[file: uploads/sales.csv (text/csv, 5 B)]')}`,
      `[@alice]: ${block('upload', '[file: uploads/sales-2.csv (text/csv, 6 B)]')}`,
    ]);
  });

  it('fetches the files of a message delivered twice once', async () => {
    await start();
    const csv = file('sales.csv', 'once');
    const event = upload('again', [csv]);
    await receive(event);
    await receive(event);
    expect(csv.downloads).toBe(1);
    expect(readdirSync(path.join(sandbox.workspaceDir?.('slack:C1') ?? '', 'uploads'))).toEqual(['sales.csv']);
    expect(h.llm.requests).toHaveLength(1);
  });

  it('refuses a file over the platform limit without downloading it, and says why', async () => {
    await start();
    const big = file('dump.sql', 'x', { size: 3 * 1024 * 1024, mimeType: 'application/sql' });
    await receive(upload('the dump', [big]));
    expect(big.downloads).toBe(0);
    expect(lastText(h.llm.requests[0] as RecordedRequest)).toBe(
      `[@alice]: the dump\n${block('upload', '[file: dump.sql (application/sql, 3.0 MB) not saved: larger than the 1 MB limit]')}`,
    );
  });

  it('refuses a file that turns out larger than the limit once downloaded', async () => {
    await start();
    const liar = file('small.bin', 'y'.repeat(1024 * 1024 + 1), { size: 10, mimeType: 'application/octet-stream' });
    await receive(upload('', [liar]));
    expect(lastText(h.llm.requests[0] as RecordedRequest)).toMatch(/could not be saved: larger than the 1 MB limit/);
    expect(readdirSync(sandbox.workspaceDir?.('slack:C1') ?? '')).toEqual(['README.txt']);
  });

  it('says so when a download fails, and still delivers the message', async () => {
    await start();
    await receive(upload('look', [file('a.csv', '', { error: 'the file host answered 403' })]));
    expect(lastText(h.llm.requests[0] as RecordedRequest)).toBe(
      `[@alice]: look\n${block('upload', '[file: a.csv (text/csv, 0 B) could not be saved: the file host answered 403]')}`,
    );
  });

  it('does not write through an uploads/ symlink that leads out of the workspace', async () => {
    await start();
    const workspace = (await sandbox.ensureWorkspace?.('slack:C1')) ?? '';
    mkdirSync(path.join(dir, 'outside'));
    symlinkSync(path.join(dir, 'outside'), path.join(workspace, 'uploads'));
    await receive(upload('', [file('x.csv', 'data')]));
    expect(readdirSync(path.join(dir, 'outside'))).toEqual([]);
    expect(lastText(h.llm.requests[0] as RecordedRequest)).toMatch(/could not be saved: uploads is a symlink/);
  });

  it('keeps the order of a room: a message after an upload waits for it', async () => {
    await start();
    let release: (() => void) | undefined;
    const slow: InboundFile = {
      name: 'slow.csv',
      size: 4,
      download: () =>
        new Promise((resolve) => {
          release = () => resolve(new TextEncoder().encode('slow'));
        }),
    };
    const first = h.bridge.sink.receive(upload('first', [slow]));
    const second = h.bridge.sink.receive(upload('second', []));
    await until(() => release !== undefined);
    release?.();
    await Promise.all([first, second]);
    await h.bridge.idle();
    const room = await h.store.rooms.open('slack', 'C1');
    expect((await h.store.rooms.history(room.id, 10)).map((message) => message.content.split('\n')[0])).toEqual([
      'first',
      'second',
    ]);
  });

  it('tells the agents when the room has no workspace', async () => {
    h = await startHarness({ agents: [{ name: 'code', activation: 'always' }] }); // the fake sandbox has none
    h.llm.respond(() => ({ content: '[pass]' }));
    await h.adapter.sink?.receive({ ...upload('see', [file('a.csv', 'a')]), platform: 'test' });
    await h.bridge.idle();
    expect(lastText(h.llm.requests[0] as RecordedRequest)).toBe(
      `[@alice]: see\n${block('upload', '[file: a.csv (text/csv, 1 B) not saved: this room has no workspace (the sandbox is not available)]')}`,
    );
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { newestOf } from '../helpers/harness.js';
import { block, idsHidden } from '../helpers/untrusted.js';
import { type DiscordHarness, startDiscordHarness } from './discord-harness.js';

let h: DiscordHarness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The newest room message the agent was shown. */
const lastText = (request: RecordedRequest) => idsHidden(newestOf(request));

async function start(env: Record<string, string> = {}): Promise<DiscordHarness> {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-discord-uploads-'));
  h = await startDiscordHarness({ agents: [{ name: 'code', activation: 'always' }], env, workspaces: dir });
  h.llm.respond(() => ({ content: '[pass]' }));
  return h;
}

describe('Discord attachments', () => {
  it("saves an attachment in the channel's workspace from its signed link, sending no token", async () => {
    const harness = await start();
    const sent = harness.discord.humanSays('general', 'alice', '', {
      attachments: [{ filename: 'sales.csv', contentType: 'text/csv; charset=utf-8', content: 'region,total\n' }],
    });
    await harness.settle(sent.id);

    const room = `discord:${harness.discord.channel('general').id}`;
    const saved = path.join(harness.sandbox.workspaceDir?.(room) ?? '', 'uploads', 'sales.csv');
    expect(readFileSync(saved, 'utf8')).toBe('region,total\n');
    expect(harness.discord.attachmentRequests).toEqual([
      { id: sent.attachments[0]?.id, status: 200, authorization: undefined },
    ]);
    expect(lastText(harness.llm.requests[0] as RecordedRequest)).toBe(
      `[@Alice]: ${block('upload', '[file: uploads/sales.csv (text/csv, 13 B)]')}`,
    );
  });

  it("saves the file of a forward that holds only an attachment, as for a message's own", async () => {
    const harness = await start();
    const original = harness.discord.humanSays('general', 'alice', '', {
      attachments: [{ filename: 'notes.txt', contentType: 'text/plain', content: 'ship it friday\n' }],
    });
    await harness.settle(original.id);
    const forward = harness.discord.forward('general', 'alice', original);
    await harness.settle(forward.id);

    const room = `discord:${harness.discord.channel('general').id}`;
    const uploads = path.join(harness.sandbox.workspaceDir?.(room) ?? '', 'uploads');
    expect(readFileSync(path.join(uploads, 'notes-2.txt'), 'utf8')).toBe('ship it friday\n');
    expect(lastText(harness.llm.requests.at(-1) as RecordedRequest)).toBe(
      `[@Alice]: ${block('upload', '[file: uploads/notes-2.txt (text/plain, 15 B)]')}`,
    );
  });

  it('refuses an attachment over DISCORD_MAX_FILE_MB without fetching it', async () => {
    const harness = await start({ DISCORD_MAX_FILE_MB: '1' });
    const sent = harness.discord.humanSays('general', 'alice', 'the archive', {
      attachments: [{ filename: 'logs.zip', contentType: 'application/zip', content: Buffer.alloc(2 * 1024 * 1024) }],
    });
    await harness.settle(sent.id);
    expect(harness.discord.attachmentRequests).toEqual([]);
    expect(lastText(harness.llm.requests[0] as RecordedRequest)).toBe(
      `[@Alice]: the archive\n${block('upload', '[file: logs.zip (application/zip, 2.0 MB) not saved: larger than the 1 MB limit]')}`,
    );
  });
});

/**
 * Uploads waiting for their message are held in memory: bounded in all (5 × WEB_MAX_FILE_MB), refused past it with a
 * line, and let go as soon as their message is taken.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SocketPage } from './socket-page.js';
import { signIn, startWebHarness, type WebHarness } from './web-harness.js';

let h: WebHarness;
afterEach(async () => h?.close());

const MB = 1024 * 1024;

describe('uploads held for their message', () => {
  it('holds at most 5 × WEB_MAX_FILE_MB in all, refuses past it with a line, and lets go of files a message took', async () => {
    h = await startWebHarness({ env: { WEB_MAX_FILE_MB: '1' } });
    h.llm.respond(() => ({ content: '[pass]' }));
    const ana = await signIn(await h.invite('ana'));
    const ben = await signIn(await h.invite('ben'));
    const upload = (cookie: string, name: string) =>
      fetch(`${h.url}/api/rooms/general/files?name=${name}`, {
        method: 'POST',
        headers: { cookie, origin: h.url },
        body: new Uint8Array(MB),
      });
    const held: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await upload(ana, `part${i}.bin`);
      expect(answer.status).toBe(201);
      held.push(((await answer.json()) as { file: string }).file);
    }
    const refused = await upload(ben, 'more.bin');
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: string }).error).toBe(
      'too many uploaded files are waiting for their messages (5 MB in all): send yours, or try again in a few minutes',
    );
    const page = await SocketPage.open(h.url, ana);
    page.post({ id: 'with-five-files', text: 'the parts', files: held });
    await page.next('ack');
    expect((await upload(ben, 'more.bin')).status).toBe(201);
  });
});

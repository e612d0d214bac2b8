/**
 * The web room's commands against what the docs promise: rights read from the store at every command (an operator
 * demoted while her page is open loses the commands at once), `/budget` as on every platform, and a `/pass` from
 * the operator console told to the humans in the room.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { agentOf } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { SocketPage } from './socket-page.js';
import { signIn, startWebHarness, type WebHarness } from './web-harness.js';

let h: WebHarness;
afterEach(async () => h?.close());

describe("the web room's commands", () => {
  it('reads rights at every command: an operator demoted with her page open is refused at once', async () => {
    h = await startWebHarness();
    const ana = await signIn(await h.invite('ana', { operator: true }));
    const page = await SocketPage.open(h.url, ana);
    page.post({ id: 'privacy-as-operator', text: '/privacy' });
    expect((await page.next('notice')).text).toMatch(/^Privacy in this room: off\./);
    // `npm run web:invite -- ana` without --operator: she is a member now.
    await h.invite('ana');
    page.post({ id: 'privacy-as-member', text: '/privacy mentions' });
    page.post({ id: 'pass-as-member', text: '/pass' });
    await until(() => page.frames.filter((f) => f.type === 'notice').length === 3);
    const notices = page.frames.flatMap((f) => (f.type === 'notice' ? [f.text] : []));
    expect(notices.slice(1)).toEqual(['Only operators can use /privacy.', 'Only operators can use /pass.']);
    expect(page.closed).toBeUndefined();
  });

  it("answers /budget with today's spend, as on every platform", async () => {
    h = await startWebHarness();
    const ana = await signIn(await h.invite('ana', { operator: true }));
    const ben = await signIn(await h.invite('ben'));
    const a = await SocketPage.open(h.url, ana);
    const b = await SocketPage.open(h.url, ben);
    a.post({ id: 'budget-operator', text: '/budget' });
    expect((await a.next('notice')).text).toMatch(/^Spending on \d{4}-\d{2}-\d{2} \(.*\):\n- bridge: \$0/);
    b.post({ id: 'budget-member', text: '/budget' });
    expect((await b.next('notice')).text).toBe('Only operators can use /budget.');
    a.post({ id: 'help-command', text: '/help' });
    expect((await a.next('notice', (f) => f.text.startsWith('Commands'))).text).toContain('/budget');
  });

  it('tells the humans in the room that control is theirs when an operator uses /pass from the console', async () => {
    h = await startWebHarness();
    h.llm.respond((request) => (agentOf(request) === 'code' ? { hang: true } : { content: 'x' }));
    const ana = await signIn(await h.invite('ana', { operator: true }));
    const ben = await signIn(await h.invite('ben'));
    const room = await SocketPage.open(h.url, ben);
    room.post({ id: 'long-turn', text: '@code take your time' });
    await until(() => h.llm.requests.length === 1);
    const answer = await fetch(`${h.url}/api/ops/command`, {
      method: 'POST',
      headers: { cookie: ana, origin: h.url, 'content-type': 'application/json' },
      body: JSON.stringify({ room: 'web:general', name: 'pass', args: '' }),
    });
    expect(((await answer.json()) as { answer: string }).answer).toBe(
      'Control is with the humans (1 agent turn stopped).',
    );
    const line = await room.next(
      'event',
      (f) => f.event.kind === 'message' && f.event.message.role === 'system' && f.event.message.text.includes('/pass'),
    );
    expect(line.event.kind === 'message' && line.event.message.text).toBe(
      'Control is with the humans: ana used /pass from the operator console.',
    );
  });
});

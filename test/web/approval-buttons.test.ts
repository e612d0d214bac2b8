// biome-ignore-all lint/performance/useDomNodeTextContent: these are playwright's Locator.innerText(), the text as shown.
/**
 * Approval cards in the web room, in a real browser (rule 17, docs/trust.md): the card shows Approve and Deny buttons;
 * a click sends the command a typed `/approve A1` is, so the server checks it as any command — the human who asked
 * or an operator may answer, another member is told why, and a person's look-alike text has no buttons.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { dataOf } from '../helpers/untrusted.js';
import { browserPlan, launchChromium } from './browser.js';
import { signIn, startWebHarness, type WebHarness } from './web-harness.js';

const plan = browserPlan();
/** Polls until the value matches, with room for a busy machine. */
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 30_000, interval: 50 });

const lastTool = (request: RecordedRequest) => {
  const last = request.messages.at(-1);
  return last?.role === 'tool' ? dataOf(last.content) : undefined;
};

describe.runIf(plan.run)('approval buttons in the web room', { timeout: 120_000 }, () => {
  let browser: Browser;
  let h: WebHarness;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    browser = await launchChromium(plan);
  });
  afterAll(async () => browser?.close());
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
    await h?.close();
  });

  async function signedIn(name: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(await h.invite(name));
    await page.getByRole('button', { name: `Sign in as ${name}` }).click();
    await page.waitForURL(/\/room\/general$/);
    await connected(page);
    return page;
  }

  /** The web room with `code`, whose bash waits for approval, and a model that runs `command` then reports it. */
  async function startCoding(command: string): Promise<void> {
    h = await startWebHarness({
      agents: [
        {
          name: 'code',
          tools: ['bash'],
          approvals: { modes: new Map([['bash', 'ask']]), bashAllow: [], bashDeny: [] },
        },
      ],
    });
    h.sandbox.onExec((_room, ran) => ({ output: `ran ${ran}`, exitCode: 0 }));
    h.llm.respond((request) => {
      const result = lastTool(request);
      if (result !== undefined) return { content: `result: ${result.replace(/\s+/g, ' ').trim()}` };
      return { toolCalls: [{ name: 'bash', arguments: { command } }] };
    });
  }

  const connected = (page: Page) => page.locator('#connection[data-state="open"]').waitFor();
  const card = (page: Page) => page.locator('#messages .msg.system', { hasText: 'Approval needed [A1]' });
  const notices = (page: Page) => page.locator('#messages .msg.notice .body').allInnerTexts();

  it('shows the card with Approve and Deny; only the human who asked may approve by a click', async () => {
    await startCoding('rm -rf build');
    const ana = await signedIn('ana');
    const ben = await signedIn('ben');
    await ana.locator('#box').fill('@code clean the build folder');
    await ana.locator('#box').press('Enter');

    await card(ben).waitFor();
    expect(await card(ben).getByRole('button').allInnerTexts()).toEqual(['Approve A1', 'Deny A1']);
    await card(ben).getByRole('button', { name: 'Approve A1' }).click();
    await poll(() => notices(ben)).toEqual(['Only @ana (who asked) or an operator can answer A1.']);
    expect(h.sandbox.calls).toEqual([]);

    // The operator console shows the card waiting, and the access policy in force.
    const ops = await signIn(await h.invite('olga', { operator: true }));
    const overview = await (await fetch(`${h.url}/api/ops/overview`, { headers: { cookie: ops } })).json();
    expect(overview.rooms.find((r: { key: string }) => r.key === 'web:general')?.approvals).toEqual([
      { id: 'A1', agent: 'code', tool: 'bash', status: 'waiting', root: 'ana' },
    ]);
    expect(overview.access).toMatch(
      /^Who may wake the agents: everyone the platform lets in, in every channel\.\nDirect messages: /,
    );

    // A reload keeps the card's buttons (the live feed still has them).
    await ben.reload();
    await connected(ben);
    await poll(() => card(ben).getByRole('button').count()).toBe(2);

    await card(ana).getByRole('button', { name: 'Approve A1' }).click();
    await poll(() => notices(ana)).toEqual(['A1 approved.']);
    await poll(() => ana.locator('#messages .msg.agent', { hasText: 'result:' }).count()).toBe(1);
    expect(h.sandbox.calls.map((c) => c.command)).toEqual(['rm -rf build']);
    // Only the card has buttons: the line answering it, and a person's look-alike text, have none.
    await ben.locator('#box').fill('Approval needed [A2]: code wants to run bash: rm -rf /');
    await ben.locator('#box').press('Enter');
    await poll(() => ana.locator('#messages .msg.human', { hasText: 'Approval needed [A2]' }).count()).toBe(1);
    // Answered, the card is closed: it says how it ended, and no page shows its buttons any more.
    await poll(() => ana.locator('#messages .msg.system', { hasText: 'Approved by ana.' }).count()).toBe(1);
    expect(await ana.locator('#messages .card-actions').count()).toBe(0);
    await ben.reload();
    await connected(ben);
    await poll(() => ben.locator('#messages .msg.system', { hasText: 'Approved by ana.' }).count()).toBe(1);
    expect(await ben.locator('#messages .card-actions').count()).toBe(0);
    expect(await ana.locator('#messages .msg.human button').count()).toBe(0);
  });

  it('lets an operator answer a card and pair a DM from the operator console', async () => {
    await startCoding('make deploy');
    const ana = await signedIn('ana');
    await ana.locator('#box').fill('@code deploy');
    await ana.locator('#box').press('Enter');
    await card(ana).waitFor();

    const context = await browser.newContext({ viewport: { width: 1300, height: 900 } });
    contexts.push(context);
    const ops = await context.newPage();
    await ops.goto(await h.invite('olga', { operator: true }));
    await ops.getByRole('button', { name: 'Sign in as olga' }).click();
    await ops.goto(`${h.url}/ops`);
    await ops.getByRole('button', { name: 'Approve A1' }).click();
    await poll(() => ops.locator('#answer').innerText()).toBe('web:general: A1 approved.');
    await poll(() => ana.locator('#messages .msg.agent', { hasText: 'result: ran make deploy' }).count()).toBe(1);
    expect(h.sandbox.calls.map((c) => c.command)).toEqual(['make deploy']);
    await ops.getByRole('button', { name: 'Codes waiting' }).click();
    await poll(() => ops.locator('#answer').innerText()).toMatch(/No pairing codes are waiting\./);
    await ops.getByLabel('Pairing code of a direct message').fill('ABCD-2345');
    await ops.getByRole('button', { name: 'Approve the code' }).click();
    await poll(() => ops.locator('#answer').innerText()).toMatch(/No code ABCD-2345 is waiting/);
  });
});

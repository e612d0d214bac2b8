// biome-ignore-all lint/performance/useDomNodeTextContent: these are playwright's Locator.innerText(), the text as shown.
/**
 * The web room and the operator console in a real browser (Debian's Chromium, driven by playwright-core): people
 * sign in with their links, talk with three agents, upload a file, lose their connection and get it back, are
 * revoked; an operator stops a turn from the console. Screenshots of the room and the console are kept in
 * artifacts/web/.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentOf } from '../helpers/harness.js';
import { browserPlan, launchChromium } from './browser.js';
import { TcpProxy } from './tcp-proxy.js';
import { startWebHarness, type WebHarness } from './web-harness.js';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../artifacts/web');
const plan = browserPlan();
/** Polls until the value matches, with room for a busy machine. */
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 30_000, interval: 50 });

describe.runIf(plan.run)('the web room in a browser', { timeout: 120_000 }, () => {
  let browser: Browser;
  let h: WebHarness;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    browser = await launchChromium(plan);
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => browser?.close());
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
    await h?.close();
  });

  /** A person's browser, signed in through their link (opened at `base`, default the room's own address). */
  async function signedIn(name: string, options: { operator?: boolean; base?: string; width?: number } = {}) {
    const context = await browser.newContext({ viewport: { width: options.width ?? 1100, height: 760 } });
    contexts.push(context);
    const page = await context.newPage();
    const link = await h.invite(name, { operator: options.operator ?? false, base: options.base ?? h.url });
    await page.goto(link);
    await page.getByRole('button', { name: `Sign in as ${name}` }).click();
    await page.waitForURL(/\/room\/general$/);
    await connected(page);
    return page;
  }

  const connected = (page: Page) => page.locator('#connection[data-state="open"]').waitFor();
  const agentMessages = (page: Page) => page.locator('#messages .msg.agent:not(.streaming)');
  const texts = (page: Page, selector: string) => page.locator(selector).allInnerTexts();

  it('seats two people and three agents in one room: @ completion, Enter and Shift+Enter, a reply streamed in, agents marked', async () => {
    h = await startWebHarness();
    h.llm.respond((request) => ({
      content: `@ana here is what ${agentOf(request)} thinks, written a few words at a time.`,
      chunkDelayMs: 40,
    }));
    const ana = await signedIn('ana');
    const ben = await signedIn('ben');
    // Keyboard only: @ completion of agents (and people), Enter takes the name.
    await ana.locator('#box').focus();
    await ana.keyboard.type('@co');
    await poll(() => ana.locator('#completions [role="option"]').allInnerTexts()).toEqual(['@code agent']);
    await ana.keyboard.press('Enter');
    await ana.keyboard.type('@da');
    await ana.keyboard.press('Tab');
    await ana.keyboard.type('@rev');
    await ana.keyboard.press('Enter');
    await ana.keyboard.type('compare the numbers');
    await ana.keyboard.press('Shift+Enter');
    await ana.keyboard.type('and say which is larger');
    expect(await ana.inputValue('#box')).toBe('@code @data @reviewer compare the numbers\nand say which is larger');
    await ana.keyboard.press('Enter');
    expect(await ana.inputValue('#box')).toBe('');
    // Ben sees it at once, its line break kept; then each agent's reply, first while it is written.
    const human = ben.locator('#messages .msg.human').first();
    await poll(() => human.locator('.body').innerHTML()).toContain('compare the numbers<br>and say which is larger');
    await ben.locator('#messages .msg.agent.streaming').first().waitFor();
    await poll(() => agentMessages(ben).count()).toBe(3);
    expect(await texts(ben, '#messages .msg.agent .author')).toEqual(['code', 'data', 'reviewer']);
    expect(await texts(ben, '#messages .msg.agent .badge')).toEqual(['AGENT', 'AGENT', 'AGENT']);
    expect(await ben.locator('#messages .msg.human .badge').count()).toBe(0);
    expect(await agentMessages(ana).count()).toBe(3);
    await ana.screenshot({ path: path.join(ARTIFACTS, 'room.png') });
  });

  it('shows a bash run as a collapsible block with its exit status, and the bridge’s own lines set apart', async () => {
    h = await startWebHarness({ agents: [{ name: 'code', tools: ['bash'] }, { name: 'data' }] });
    h.sandbox.onExec((_room, command) => ({ output: `ran ${command}`, exitCode: 3 }));
    let call = 0;
    h.llm.respond((request) => {
      if (agentOf(request) === 'data') return { status: 500, errorMessage: 'the model is down' };
      return ++call === 1
        ? { toolCalls: [{ name: 'bash', arguments: { command: 'wc -l sales.csv' } }] }
        : { content: 'It failed with 3.' };
    });
    const ana = await signedIn('ana');
    await ana.locator('#box').fill('@code count the lines, @data too');
    await ana.locator('#box').press('Enter');
    const tool = ana.locator('#messages details.tool').first();
    await tool.waitFor();
    expect(await tool.locator('summary').innerText()).toBe('$ wc -l sales.csv exit 3');
    expect(await tool.getAttribute('open')).toBeNull();
    await tool.locator('summary').click();
    expect(await tool.locator('pre').innerText()).toBe('ran wc -l sales.csv\n[exit code: 3]');
    const line = ana.locator('#messages .msg.system');
    await line.waitFor();
    expect(await line.locator('.author').innerText()).toBe('Roundtable');
    expect(await line.innerText()).toContain('@data could not answer');
    expect(await line.getAttribute('role')).toBe('note');
  });

  it("saves a file uploaded from the page into the room's sandbox uploads/", async () => {
    h = await startWebHarness();
    h.llm.respond(() => ({ content: 'thanks for the file' }));
    const ana = await signedIn('ana');
    await ana
      .locator('#file')
      .setInputFiles({ name: 'sales.csv', mimeType: 'text/csv', buffer: Buffer.from('a,b\n1,2\n') });
    await ana.locator('#attached li', { hasText: 'sales.csv' }).waitFor();
    await ana.locator('#box').fill('@code here are the sales');
    await ana.locator('#box').press('Enter');
    await agentMessages(ana).first().waitFor();
    const workspace = h.sandbox.workspaceDir?.('web:general') ?? '';
    expect(readFileSync(path.join(workspace, 'uploads', 'sales.csv'), 'utf8')).toBe('a,b\n1,2\n');
    expect(await ana.locator('#messages .msg.human .files').innerText()).toBe('sales.csv');
  });

  it('loses and doubles nothing across a dropped and restored connection', async () => {
    h = await startWebHarness();
    const proxy = await TcpProxy.start(h.web.port ?? 0);
    try {
      const ana = await signedIn('ana', { base: proxy.url });
      const ben = await signedIn('ben');
      await ben.locator('#box').fill('before the drop');
      await ben.locator('#box').press('Enter');
      await ana.locator('#messages .msg.human', { hasText: 'before the drop' }).waitFor();
      proxy.cut();
      await ana.locator('#connection[data-state="waiting"]').waitFor();
      // Ana writes while away; Ben goes on talking.
      await ana.locator('#box').fill('written while away');
      await ana.locator('#box').press('Enter');
      for (const text of ['while ana was away 1', 'while ana was away 2']) {
        await ben.locator('#box').fill(text);
        await ben.locator('#box').press('Enter');
      }
      await ben.locator('#messages .msg.human', { hasText: 'away 2' }).waitFor();
      proxy.restore();
      await connected(ana);
      const expected = ['before the drop', 'written while away', 'while ana was away 1', 'while ana was away 2'];
      for (const page of [ana, ben]) {
        await poll(() => texts(page, '#messages .msg.human:not(.pending) .body')).toEqual(
          expect.arrayContaining(expected),
        );
        expect(await page.locator('#messages .msg.human').count()).toBe(4);
        expect(await page.locator('#messages .msg.pending').count()).toBe(0);
      }
      expect((await texts(ben, '#messages .msg.human .body')).slice(0, 1)).toEqual(['before the drop']);
      const stored = (await h.bridge.sink.transcript?.('web:general', { limit: 10 })) ?? [];
      expect(stored.map((m) => m.text).sort()).toEqual([...expected].sort());
    } finally {
      await proxy.close();
    }
  });

  it('notices a connection that went quiet without closing, and comes back with what it missed', async () => {
    h = await startWebHarness({ beatMs: 200 });
    const proxy = await TcpProxy.start(h.web.port ?? 0);
    try {
      const ana = await signedIn('ana', { base: proxy.url });
      const ben = await signedIn('ben');
      proxy.stall();
      await ben.locator('#box').fill('said while the line was quiet');
      await ben.locator('#box').press('Enter');
      await ana.locator('#messages .msg.human', { hasText: 'said while the line was quiet' }).waitFor();
      expect(await ana.locator('#messages .msg.human').count()).toBe(1);
      await connected(ana);
    } finally {
      await proxy.close();
    }
  });

  it('stops a turn in flight with /pass from the operator console', async () => {
    h = await startWebHarness();
    h.llm.respond(() => ({ content: `${'This answer takes a long time to write. '.repeat(40)}`, chunkDelayMs: 150 }));
    const ana = await signedIn('ana', { operator: true });
    await ana.locator('#box').fill('@code write at length');
    await ana.locator('#box').press('Enter');
    await ana.locator('#messages .msg.agent.streaming').waitFor();
    const consolePage = await ana.context().newPage();
    await consolePage.goto(`${h.url}/ops`);
    const row = consolePage.locator('#rooms-table tbody tr', { hasText: 'web:general' });
    await poll(() => row.locator('td').nth(0).innerText()).toMatch(/agents may speak/);
    await poll(() => row.locator('td').nth(1).innerText()).toBe('@code writing');
    await row.getByRole('button', { name: 'Pass' }).click();
    await poll(() => consolePage.locator('#answer').innerText()).toBe(
      'web:general: Control is with the humans (1 agent turn stopped).',
    );
    await poll(() => row.locator('td').nth(0).innerText()).toMatch(/^handed back to the humans: \/pass/);
    // The reply being written is gone from the room, and nothing of it was posted.
    await poll(() => ana.locator('#messages .msg.agent').count()).toBe(0);
    await h.bridge.idle();
    expect(await agentMessages(ana).count()).toBe(0);
    // Why: the message woke @code, and control went back to the humans by /pass.
    // (and the room's other agents, not named, were not).
    await poll(() => consolePage.locator('#why .reasons').first().innerText()).toMatch(
      /Woke @code \(named in the message\)\. Not woken: [^\n]*\(not named\)\.\nControl went back to the humans: \/pass\./,
    );
    await consolePage.screenshot({ path: path.join(ARTIFACTS, 'console.png'), fullPage: true });
  });

  it('shows an agent’s <img onerror> and <script> as text and never runs them', async () => {
    h = await startWebHarness();
    const attack = 'Look: <img src=x onerror="window.__ran=1"> and <script>window.__ran=2</script> **done**';
    h.llm.respond(() => ({ content: attack }));
    const ana = await signedIn('ana');
    let dialogs = 0;
    ana.on('dialog', (dialog) => {
      dialogs++;
      void dialog.dismiss();
    });
    await ana.locator('#box').fill('@code show me');
    await ana.locator('#box').press('Enter');
    const reply = agentMessages(ana).first();
    await reply.waitFor();
    expect(await reply.locator('.body').innerText()).toBe(
      'Look: <img src=x onerror="window.__ran=1"> and <script>window.__ran=2</script> done',
    );
    expect(await reply.locator('img, script').count()).toBe(0);
    expect(await reply.locator('strong').innerText()).toBe('done');
    await ana.reload();
    await connected(ana);
    await agentMessages(ana).first().waitFor();
    expect(await ana.evaluate(() => (window as unknown as { __ran?: number }).__ran)).toBeUndefined();
    expect(await ana.locator('#messages img, #messages script').count()).toBe(0);
    expect(dialogs).toBe(0);
  });

  it('refuses a request without a session', async () => {
    h = await startWebHarness();
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    const answer = await page.goto(`${h.url}/room/general`);
    expect(answer?.status()).toBe(401);
    expect(await page.locator('main').innerText()).toContain('You are not signed in');
    const calls = await page.evaluate(async () => {
      const me = await fetch('/api/me');
      const socket = await new Promise<string>((resolve) => {
        const ws = new WebSocket(`ws://${location.host}/ws?room=general`);
        ws.onopen = () => resolve('open');
        ws.onerror = () => resolve('refused');
      });
      return { me: me.status, socket };
    });
    expect(calls).toEqual({ me: 401, socket: 'refused' });
    expect((await page.goto(`${h.url}/ops`))?.status()).toBe(401);
  });

  it("cuts off a revoked person's open page", async () => {
    h = await startWebHarness();
    const ana = await signedIn('ana');
    const ben = await signedIn('ben');
    await h.store.people.revoke('ana');
    await ana.locator('#connection[data-state="closed"]').waitFor();
    expect(await ana.locator('#connection').innerText()).toMatch(/session ended/);
    expect(await ana.locator('#box').isDisabled()).toBe(true);
    expect(await ben.locator('#connection').getAttribute('data-state')).toBe('open');
    await ana.reload();
    expect(await ana.locator('main').innerText()).toContain('You are not signed in');
  });

  it('loads older messages on scroll, and fits a narrow window', async () => {
    h = await startWebHarness();
    for (let i = 1; i <= 70; i++) {
      await h.bridge.sink.receive({
        platform: 'web',
        channel: 'general',
        messageId: `h.older.${i}`,
        author: { id: 'web:ben', name: 'ben', kind: 'human' },
        text: `message ${i}`,
      });
    }
    const ana = await signedIn('ana', { width: 360 });
    await poll(() => ana.locator('#messages .msg').count()).toBe(50);
    expect(await ana.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await ana.locator('#transcript').evaluate((element) => {
      element.scrollTop = 0;
    });
    await poll(() => ana.locator('#messages .msg').count()).toBe(70);
    expect(await ana.locator('#messages .msg .body').first().innerText()).toBe('message 1');
    expect(await ana.locator('#start').isVisible()).toBe(true);
    // The controls are labelled for screen readers.
    for (const name of ['Send', 'Attach a file', 'Sign out']) await ana.getByRole('button', { name }).waitFor();
    await ana.getByRole('combobox', { name: 'Message #general' }).waitFor();
  });
});

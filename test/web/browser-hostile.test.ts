// biome-ignore-all lint/performance/useDomNodeTextContent: these are playwright's Locator.innerText(), the text as shown.
/**
 * The web room's page against what would break it, in Chromium: a message longer than the server takes is refused on
 * the page with a line and never sent; a room holding the Markdown renderer's worst cases (a person's 16,000
 * underscores, unclosed emphasis, backtick runs, nesting, chains of links, an agent's 40,000-character reply) shows
 * every message, in the room and in the operator console's "why" view, and renders them fast.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { browserPlan, launchChromium } from './browser.js';
import { startWebHarness, type WebHarness } from './web-harness.js';

const plan = browserPlan();
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 30_000, interval: 50 });

/** The renderer's worst cases, each at most a person's 16,000 characters. */
const HOSTILE = [
  '_'.repeat(16_000),
  '**a '.repeat(4_000),
  '__a '.repeat(4_000),
  `${'*_'.repeat(3_999)}x${'_*'.repeat(3_999)}`,
  Array.from({ length: 170 }, (_, n) => '`'.repeat(n + 1)).join('a'),
  '[a]('.repeat(4_000),
  '['.repeat(16_000),
  '[a](https://x.io/)'.repeat(880),
];
/** An agent's reply of 40,000 characters. */
const LONG_REPLY = `${'**bold _it_ `c` ~~s~~ [l](https://x.io) __u '.repeat(1_000)}`.slice(0, 40_000);

describe.runIf(plan.run)('the web room against hostile messages, in a browser', { timeout: 180_000 }, () => {
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

  async function signedIn(name: string, operator = false): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(await h.invite(name, { operator }));
    await page.getByRole('button', { name: `Sign in as ${name}` }).click();
    await page.waitForURL(/\/room\/general$/);
    await connected(page);
    return page;
  }
  const connected = (page: Page) => page.locator('#connection[data-state="open"]').waitFor();

  it('refuses a message over the limit on the page, with a line, and never sends it', async () => {
    h = await startWebHarness();
    const ana = await signedIn('ana');
    const ben = await signedIn('ben');
    const sent: number[] = [];
    ana.on('websocket', (socket) => socket.on('framesent', ({ payload }) => sent.push(payload.length)));
    await ana.reload();
    await connected(ana);
    const pasted = 'a long log line\n'.repeat(18_750);
    // As a paste puts it in the box (typing 300,000 characters one by one would take the test's whole time).
    await ana.locator('#box').evaluate((box: HTMLTextAreaElement, text) => {
      box.value = text;
      box.dispatchEvent(new InputEvent('input', { inputType: 'insertFromPaste' }));
    }, pasted);
    await ana.locator('#box').press('Enter');
    await poll(() => ana.locator('#notice').innerText()).toBe(
      'Not sent: the message is 300,000 characters and the limit is 16,000. Shorten it, or attach it as a file.',
    );
    expect(await ana.inputValue('#box')).toHaveLength(300_000);
    expect(await ana.locator('#messages .msg').count()).toBe(0);
    // The connection stays as it was; what fits goes as usual.
    await ana.locator('#box').fill('a short one');
    await ana.locator('#box').press('Enter');
    await ben.locator('#messages .msg.human', { hasText: 'a short one' }).waitFor();
    expect(await ana.locator('#connection').getAttribute('data-state')).toBe('open');
    expect(Math.max(0, ...sent)).toBeLessThan(1_000);
    expect(await ben.locator('#messages .msg').count()).toBe(1);
  });

  it('shows every message of a room holding the worst cases, in the room and the console, rendered fast', async () => {
    // The agent may write the whole long reply (the bridge cuts an answer at its output cap).
    h = await startWebHarness({
      agents: [{ name: 'code', maxOutputTokens: 40_000 }, { name: 'data' }, { name: 'reviewer' }],
    });
    h.llm.respond(() => ({ content: LONG_REPLY }));
    for (let i = 0; i < 40; i++) {
      await h.bridge.sink.receive({
        platform: 'web',
        channel: 'general',
        messageId: `h.hostile.${i}`,
        author: { id: 'web:ben', name: 'ben', kind: 'human' },
        text: HOSTILE[i % HOSTILE.length] as string,
      });
    }
    await h.bridge.sink.receive({
      platform: 'web',
      channel: 'general',
      messageId: 'h.ask',
      author: { id: 'web:ben', name: 'ben', kind: 'human' },
      text: '@code answer at length',
    });
    await h.bridge.idle();
    await h.bridge.sink.receive({
      platform: 'web',
      channel: 'general',
      messageId: 'h.last',
      author: { id: 'web:ben', name: 'ben', kind: 'human' },
      text: 'the last word',
    });

    const ana = await signedIn('ana', true);
    await ana.locator('#messages .msg.human', { hasText: 'the last word' }).waitFor();
    expect(await ana.locator('#messages .msg').count()).toBe(43);
    const reply = await ana.locator('#messages .msg.agent .body').innerText();
    const stored = (await h.bridge.sink.transcript?.('web:general', { limit: 50 })) ?? [];
    const replied = stored.find((m) => m.kind === 'agent')?.text ?? '';
    expect(replied.length).toBeGreaterThan(10_000);
    expect(reply.split('bold').length).toBe(replied.split('bold').length);
    expect(await ana.locator('#messages .msg .body').first().innerText()).toBe(HOSTILE[0]);
    // A load of the room, from the request to the last message shown.
    let started = Date.now();
    await ana.reload();
    await ana.locator('#messages .msg.human', { hasText: 'the last word' }).waitFor();
    const roomMs = Date.now() - started;

    // The console's "why" view shows the newest messages of the room the same way.
    const console = await ana.context().newPage();
    started = Date.now();
    await console.goto(`${h.url}/ops`);
    await console.locator('#why .msg', { hasText: 'the last word' }).waitFor();
    const opsMs = Date.now() - started;
    expect(await console.locator('#why .msg.agent').count()).toBe(1);

    // The renderer alone in Chromium: the 41 hostile messages rendered and laid out.
    // (A string, so that the test's own transform leaves its import() alone.)
    const texts = [...Array.from({ length: 40 }, (_, i) => HOSTILE[i % HOSTILE.length] as string), LONG_REPLY];
    const renderMs = await ana.evaluate<number>(`(async (texts) => {
      const { renderMarkdown } = await import('/static/markdown.js');
      const box = document.createElement('div');
      document.body.append(box);
      const start = performance.now();
      for (const text of texts) box.append(renderMarkdown(text, new Set(['code'])));
      void box.offsetHeight;
      const ms = performance.now() - start;
      box.remove();
      return ms;
    })(${JSON.stringify(texts)})`);
    process.stdout.write(
      `hostile messages: 41 rendered in ${Math.round(renderMs)} ms; the room shown in ${roomMs} ms, the console in ${opsMs} ms\n`,
    );
    // Generous for a busy machine (the old renderer never finished the underscores, and took 3.2 s for **a).
    expect(renderMs).toBeLessThan(2_000);
    expect(roomMs).toBeLessThan(10_000);
    expect(opsMs).toBeLessThan(10_000);
  });
});

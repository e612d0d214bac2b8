/**
 * Web room benchmark, everything on 127.0.0.1 in one run: people in a real browser (Debian's Chromium, driven by
 * playwright-core) post to an agent whose model is the fake server, answering at once as a stream. For each post:
 *  - the fake model's own first token: from the person pressing Enter to the model writing the first piece of text
 *    (the baseline: what the bridge and the page cannot make faster),
 *  - the first streamed token on screen: from the same Enter to the reply's first text in the page's DOM,
 * both on the machine's clock (the page's and the server's `performance.timeOrigin + now()`). Goal: the page (the
 * web adapter, its socket and the page's rendering, after the model's first token) adds under 50 ms at p50.
 * Posts go round several people, so no one reaches the posting limit.
 *   npm run bench -- web [--smoke]
 */
import type { Page } from 'playwright-core';
import { isCi } from '../test/sandbox/docker-setup.js';
import { browserPlan, launchChromium } from '../test/web/browser.js';
import { startWebHarness } from '../test/web/web-harness.js';
import { reportGoal, reportSkipped } from './lib/goals.js';
import { sized, smoke } from './lib/mode.js';

const POSTS = sized(60, 6);
const WARM_UP = sized(6, 2);
const PEOPLE = 8;

function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** Marks, in the page, when Enter is pressed in the box and when a reply's first text appears. */
const MARKS = `
  window.__marks = { sent: 0, shown: 0 };
  const now = () => performance.timeOrigin + performance.now();
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && event.target.id === 'box') window.__marks = { sent: now(), shown: 0 };
  }, true);
  new MutationObserver((changes) => {
    if (window.__marks.shown) return;
    for (const change of changes) for (const node of change.addedNodes) {
      if (node.nodeType === 1 && node.matches('.msg.agent') && node.querySelector('.body').textContent) {
        window.__marks.shown = now();
        return;
      }
    }
  }).observe(document, { childList: true, subtree: true });
`;

async function main(): Promise<void> {
  const plan = browserPlan();
  if (!plan.run || plan.missing) {
    const line = plan.missing ?? 'no browser';
    if (smoke && !isCi(process.env.CI)) {
      reportSkipped(`${line} (the web bench needs Chromium and playwright-core; CI=true makes it required)`);
      return;
    }
    throw new Error(`bench/web: ${line}`);
  }
  const h = await startWebHarness({ agents: [{ name: 'code' }] });
  h.llm.respond(() => ({ content: 'The first words of the answer, then the rest of it.' }));
  const browser = await launchChromium(plan);
  try {
    const pages: Page[] = [];
    for (let i = 0; i < PEOPLE; i++) {
      const context = await browser.newContext();
      await context.addInitScript(MARKS);
      const page = await context.newPage();
      await page.goto(await h.invite(`person${i}`));
      await page.getByRole('button', { name: `Sign in as person${i}` }).click();
      await page.locator('#connection[data-state="open"]').waitFor();
      pages.push(page);
    }
    const model: number[] = [];
    const screen: number[] = [];
    for (let i = 0; i < WARM_UP + POSTS; i++) {
      const page = pages[i % PEOPLE] as Page;
      const before = h.llm.requests.length;
      const replies = await page.locator('#messages .msg.agent:not(.streaming)').count();
      await page.locator('#box').fill(`@code question ${i}`);
      await page.locator('#box').press('Enter');
      await page.locator('#messages .msg.agent:not(.streaming)').nth(replies).waitFor();
      const marks = await page.evaluate(
        () => (window as unknown as { __marks: { sent: number; shown: number } }).__marks,
      );
      const first = h.llm.requests[before]?.firstContentAt;
      await h.bridge.idle();
      if (i < WARM_UP || first === undefined || !marks.shown) continue;
      model.push(first - marks.sent);
      screen.push(marks.shown - marks.sent);
    }
    const added = screen.map((s, i) => s - (model[i] ?? 0));
    const row = (label: string, samples: number[]) =>
      `${label.padEnd(52)} p50 ${percentile(samples, 50).toFixed(1).padStart(7)} ms   p99 ${percentile(samples, 99).toFixed(1).padStart(7)} ms`;
    console.log(
      `Web room: a person's post (Enter) → first token, ${POSTS} posts (after ${WARM_UP} warm-up), ${PEOPLE} people`,
    );
    console.log(row("the fake model's own first token (baseline)", model));
    console.log(row('the first streamed token on screen', screen));
    console.log(row('what the page adds (screen - model, per post)', added));
    console.log(`ratio screen/model p50 ${(percentile(screen, 50) / percentile(model, 50)).toFixed(2)}`);
    reportGoal({
      figure: `web room: the page adds ${percentile(added, 50).toFixed(1)} ms at p50 after the model's first token`,
      goal: '< 50 ms',
      met: percentile(added, 50) < 50,
      how: `Enter in the box -> the reply's first text in the DOM (a MutationObserver in the page), minus Enter -> the fake model writing its first piece of text, per post; ${POSTS} posts after ${WARM_UP} warm-up, Chromium over 127.0.0.1, in this run`,
    });
  } finally {
    await browser.close();
    await h.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

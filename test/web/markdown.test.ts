/**
 * The room's Markdown renderer (adapters/web/public/markdown.js, plain JS for the page) on a small stand-in for the
 * browser's document: what it makes of each mark, that hostile text (16,000 underscores, unclosed emphasis, runs of
 * backticks, long chains of links, 40,000-character replies) renders whole and fast, and that a message the renderer
 * fails on is shown as plain text.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/** A module of the page (plain JS, untyped): loaded by its address. */
const pageModule = (name: string) =>
  import(pathToFileURL(path.resolve(import.meta.dirname, '../../adapters/web/public', name)).href);

/** Just what the renderer and the transcript use of a document's nodes. */
class FakeText {
  constructor(readonly data: string) {}
  get textContent(): string {
    return this.data;
  }
}

class FakeElement {
  readonly childNodes: Array<FakeElement | FakeText> = [];
  readonly attributes = new Map<string, string>();
  className = '';
  href = '';
  rel = '';
  target = '';
  constructor(readonly tag: string) {}
  append(...items: Array<FakeElement | FakeText | string>): void {
    for (const item of items) this.childNodes.push(typeof item === 'string' ? new FakeText(item) : item);
  }
  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }
  set textContent(text: string) {
    this.childNodes.splice(0, this.childNodes.length, new FakeText(text));
  }
  get textContent(): string {
    return this.childNodes.map((child) => child.textContent).join('');
  }
}

/** Elements as tags (with their link or class), text as it is: a short picture of what the renderer made. */
function html(node: FakeElement | FakeText): string {
  if (node instanceof FakeText) return node.data;
  const inside = node.childNodes.map(html).join('');
  if (node.tag === '#fragment') return inside;
  const attrs = `${node.href ? ` href="${node.href}"` : ''}${node.className ? ` class="${node.className}"` : ''}`;
  return node.tag === 'br' ? '<br>' : `<${node.tag}${attrs}>${inside}</${node.tag}>`;
}

/** How deep elements nest. */
function depth(node: FakeElement | FakeText): number {
  if (node instanceof FakeText) return 0;
  return 1 + Math.max(0, ...node.childNodes.map(depth));
}

let failOn: string | undefined;
const fakeDocument = {
  createElement: (tag: string) => {
    if (tag === failOn) throw new Error(`cannot make <${tag}>`);
    return new FakeElement(tag);
  },
  createTextNode: (text: string) => new FakeText(text),
  createDocumentFragment: () => new FakeElement('#fragment'),
};

type Render = (text: string, names?: Set<string>) => FakeElement;
let renderMarkdown: Render;

beforeEach(async () => {
  (globalThis as { document?: unknown }).document = fakeDocument;
  failOn = undefined;
  ({ renderMarkdown } = (await pageModule('markdown.js')) as unknown as {
    renderMarkdown: Render;
  });
});
afterEach(() => {
  delete (globalThis as { document?: unknown }).document;
});

const show = (text: string, names?: Set<string>) => html(renderMarkdown(text, names));

describe('the web room’s Markdown', () => {
  it('renders the safe subset', () => {
    expect(show('a **bold** and __bold__, *it* and _it_, ~~gone~~ and `co*de*`')).toBe(
      '<p>a <strong>bold</strong> and <strong>bold</strong>, <em>it</em> and <em>it</em>, <del>gone</del> and <code>co*de*</code></p>',
    );
    expect(show('**bold _and italic_** ***both*** ``a ` b``')).toBe(
      '<p><strong>bold <em>and italic</em></strong> <em><strong>both</strong></em> <code>a ` b</code></p>',
    );
    expect(
      show('see [the docs](https://example.com/a_b) or https://example.com/x_y_z. @code @nobody', new Set(['code'])),
    ).toBe(
      '<p>see <a href="https://example.com/a_b">the docs</a> or <a href="https://example.com/x_y_z">https://example.com/x_y_z</a>. <span class="mention">@code</span> @nobody</p>',
    );
    expect(show('**https://x.io/a_b** _https://x.io_ **[a](https://x.io)**')).toBe(
      '<p><strong><a href="https://x.io/a_b">https://x.io/a_b</a></strong> <em><a href="https://x.io/">https://x.io</a></em> <strong><a href="https://x.io/">a</a></strong></p>',
    );
    expect(show('[x](javascript:alert(1)) snake_case_name 2*3*4 ~~~no~~~ ** a ** `unclosed')).toBe(
      '<p>[x](javascript:alert(1)) snake_case_name 2<em>3</em>4 ~~~no~~~ ** a ** `unclosed</p>',
    );
    expect(show('# Title ##\n- one\n- **two**\n\n> said\n\n```js\nlet *x*;\n```\nline one\nline two')).toBe(
      '<p class="heading"><strong>Title</strong></p><ul><li>one</li><li><strong>two</strong></li></ul>' +
        '<blockquote><p>said</p></blockquote><pre><code class="language-js">let *x*;</code></pre><p>line one<br>line two</p>',
    );
    // Control characters are not letters: `_` after one still opens.
    expect(show('a\u0010_b_ é_b_ 9_b_')).toBe('<p>a\u0010<em>b</em> é_b_ 9_b_</p>');
    expect(show('**a *b* c** *a **b** c*')).toBe(
      '<p><strong>a <em>b</em> c</strong> <em>a <strong>b</strong> c</em></p>',
    );
    expect(show('<img src=x onerror=alert(1)> <script>x</script>')).toBe(
      '<p><img src=x onerror=alert(1)> <script>x</script></p>',
    );
  });

  /** Hostile texts: each renders with all its characters, in a bounded depth. */
  const hostile: Record<string, string> = {
    'a person’s 16,000 underscores': '_'.repeat(16_000),
    'unclosed **a, 4,000 times': '**a '.repeat(4_000),
    'unclosed __a, 4,000 times': '__a '.repeat(4_000),
    'pairs of __ 4,000 deep': `${'__a '.repeat(2_000)}${' a__'.repeat(2_000)}`,
    'emphasis nested 8,000 deep': `${'*_'.repeat(4_000)}x${'_*'.repeat(4_000)}`,
    'runs of 1 to 170 backticks': Array.from({ length: 170 }, (_, n) => '`'.repeat(n + 1)).join('a'),
    'backticks in pairs': '` '.repeat(8_000),
    'a chain of unfinished links': '[a]('.repeat(4_000),
    'open brackets': '['.repeat(16_000),
    'a chain of links': '[a](https://x.io/)'.repeat(900),
    'mentions and bare links': '@code https://x.io/a_b '.repeat(700),
    'a 40,000-character reply': `${'**bold _it_ `c` ~~s~~ [l](https://x.io) '.repeat(1_000)}`.slice(0, 40_000),
    'a heading of spaces': `# ${' #'.repeat(8_000)}x`,
    'a fence of spaces': `\`\`\`${' '.repeat(16_000)}a b`,
  };

  for (const [what, text] of Object.entries(hostile)) {
    it(`renders ${what} whole, shallow and fast (41 messages)`, () => {
      const started = performance.now();
      let last: FakeElement | undefined;
      for (let n = 0; n < 41; n++) last = renderMarkdown(text, new Set(['code']));
      const ms = performance.now() - started;
      const rendered = last as FakeElement;
      expect(depth(rendered)).toBeLessThanOrEqual(24);
      // Markers and link addresses may be consumed; every other character is shown.
      const markers = /[*_~`[\]()]/g;
      const urls = /https?:\/\/[^\s*_~`[\]()]*/g;
      const bare = (t: string) => t.replace(urls, '').replace(markers, '').replace(/\s+/g, '');
      expect(bare(rendered.textContent)).toBe(bare(text).replace(/^#/, ''));
      // Generous for a busy machine: the old renderer took seconds, or never finished.
      expect(ms).toBeLessThan(2_000);
    });
  }

  it('makes at most 2,000 inline elements in one message, and shows the marks past them as text', () => {
    const rendered = renderMarkdown(`${'*a* '.repeat(1_500)}\n${'`b` '.repeat(1_500)}`);
    const shown = html(rendered);
    expect(shown.split('<em>').length - 1).toBe(1_500);
    expect(shown.split('<code>').length - 1).toBe(500);
    expect(shown.endsWith(`<code>b</code> ${'`b` '.repeat(1_000)}</p>`)).toBe(true);
  });

  it('keeps unclosed and literal marks as they were typed', () => {
    for (const text of [hostile['a person’s 16,000 underscores'], hostile['unclosed **a, 4,000 times']?.trim()])
      expect(renderMarkdown(text as string).textContent).toBe(text);
  });

  it('shows a message it cannot render as plain text, and the others as usual', async () => {
    const { messageItem } = (await pageModule('transcript.js')) as unknown as {
      messageItem: (message: unknown, names: Set<string>) => FakeElement;
    };
    const message = (id: string, text: string) => ({ id, author: 'ana', role: 'human', text, at: 0, tools: [] });
    failOn = 'strong';
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const broken = messageItem(message('1', 'a **b** c'), new Set());
    expect(html(broken)).toContain('<pre class="plain">a **b** c</pre>');
    expect(warn).toHaveBeenCalledOnce();
    warn.mockRestore();
    failOn = undefined;
    expect(html(messageItem(message('2', 'a **b** c'), new Set()))).toContain('<p>a <strong>b</strong> c</p>');
  });
});

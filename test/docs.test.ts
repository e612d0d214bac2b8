import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { frontMatterSchema, KNOWN_TOOLS } from '../src/config/agent-file.js';
import { SETTING_NAMES } from '../src/config/index.js';
import { headingAnchors, headingSlug, isExternal, markdownLinks } from './helpers/markdown.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const DOC_PAGES = readdirSync(path.join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `docs/${name}`);
const PAGES = ['README.md', ...DOC_PAGES];
const README_MAX_LINES = 250;

/** Every relative link of a page that leads nowhere: a missing file, or a missing heading for its `#anchor`. */
function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  for (const { text, target, line } of markdownLinks(read(page))) {
    if (isExternal(target)) continue;
    const [file = '', anchor] = target.split('#', 2);
    const resolved = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
    const where = `${page}:${line}: [${text}](${target})`;
    if (resolved.startsWith('..') || !existsSync(path.join(ROOT, resolved))) {
      broken.push(`${where}: ${resolved} does not exist`);
    } else if (anchor !== undefined) {
      const isPage = resolved.endsWith('.md') && statSync(path.join(ROOT, resolved)).isFile();
      if (!isPage || !headingAnchors(read(resolved)).has(decodeURIComponent(anchor))) {
        broken.push(`${where}: ${resolved} has no heading #${anchor}`);
      }
    }
  }
  return broken;
}

describe('documentation stays in step with the code', () => {
  it('.env.example documents every variable the bridge reads', () => {
    const example = read('.env.example');
    expect(SETTING_NAMES.filter((name) => !new RegExp(`^${name}=`, 'm').test(example))).toEqual([]);
  });

  it('docs/configuration.md names every variable, every agent file key and every tool', () => {
    const page = read('docs/configuration.md');
    const missing = (names: readonly string[]) => names.filter((name) => !page.includes(`\`${name}\``));
    expect(missing(SETTING_NAMES)).toEqual([]);
    expect(missing(Object.keys(frontMatterSchema.shape))).toEqual([]);
    expect(missing(KNOWN_TOOLS)).toEqual([]);
  });

  it('README shows the set-up commands, and every npm script the docs name exists', () => {
    const readme = read('README.md');
    expect(readme).toContain('npm start');
    expect(readme).toContain('npm test');
    expect(readme).toContain('npm run demo');
    const scripts = Object.keys(JSON.parse(read('package.json')).scripts as Record<string, string>);
    const named = PAGES.flatMap((page) =>
      [...read(page).matchAll(/npm run ([\w:-]+)/g)].map((match) => `${page}: npm run ${match[1]}`),
    );
    expect(named.filter((entry) => !scripts.includes(entry.split('npm run ')[1] ?? ''))).toEqual([]);
  });
});

describe('the documentation holds together', () => {
  it(`keeps README.md a front door: under ${README_MAX_LINES} lines`, () => {
    expect(read('README.md').split('\n').length).toBeLessThan(README_MAX_LINES);
  });

  it('links every page in docs/ from README.md, and each page starts with a title and a summary', () => {
    const linked = new Set(markdownLinks(read('README.md')).map((link) => link.target.split('#')[0]));
    expect(DOC_PAGES.filter((page) => !linked.has(page))).toEqual([]);
    const withoutSummary = DOC_PAGES.filter((page) => !/^# .+\n\n[^#\n|`-]/.test(read(page)));
    expect(withoutSummary).toEqual([]);
  });

  it('has every relative link in README.md and docs/ point at an existing file and heading', () => {
    expect(PAGES.flatMap(brokenLinks)).toEqual([]);
  });

  it('reads a heading anchor as GitHub makes it', () => {
    expect(headingSlug('Sandbox: one Docker container per channel')).toBe('sandbox-one-docker-container-per-channel');
    expect(headingSlug('Relevant older messages (embeddings)')).toBe('relevant-older-messages-embeddings');
    expect(headingSlug('Usage: tokens and cost')).toBe('usage-tokens-and-cost');
    expect(headingSlug('Requests and answers (`request_reply` threads)')).toBe(
      'requests-and-answers-request_reply-threads',
    );
    expect(headingSlug('The [demo](x.md), 2 ways')).toBe('the-demo-2-ways');
    expect([...headingAnchors('# A\n## Setting up\n```\n# not a heading\n```\n## Setting up\n')]).toEqual([
      'a',
      'setting-up',
      'setting-up-1',
    ]);
  });

  it('speaks of the rules themselves, never of the design documents they came from', () => {
    const mentions = PAGES.flatMap((page) =>
      read(page)
        .split('\n')
        .map((text, index) => ({ text, line: index + 1 }))
        .filter(({ text }) =>
          /\bseed(?:s|'s)?\b/i.test(text.replace(/\brandom seeds?\b/gi, '').replace(/--seed\b/g, '')),
        )
        .map(({ text, line }) => `${page}:${line}: ${text.trim()}`),
    );
    expect(mentions).toEqual([]);
  });
});

// Markdown for the web room: a safe subset, rendered by building DOM nodes. Text from people and agents only ever
// becomes text nodes (textContent), never HTML: `<img src=x onerror=…>` and `<script>` show as the characters they
// are. Links keep only http, https and mailto addresses.
//
// Blocks: paragraphs (single newlines kept), fenced code (```), quotes (>), lists (-, *, +, 1.), headings (#).
// Inline: `code`, **bold**, __bold__, *italic*, _italic_, ~~struck~~, [text](url), bare http(s) links, @names.

const INLINE = new RegExp(
  [
    '(`+)([^`]|[^`][\\s\\S]*?[^`])\\1(?!`)', // 1, 2: code
    '\\*\\*(?=\\S)([\\s\\S]*?\\S)\\*\\*', // 3: bold
    '(?<![\\p{L}\\p{N}_])__(?=\\S)([\\s\\S]*?\\S)__(?![\\p{L}\\p{N}_])', // 4: bold (never inside a word)
    '\\*(?=[^\\s*])([^*]*?[^\\s*])\\*', // 5: italic
    '(?<![\\p{L}\\p{N}_])_(?=[^\\s_])([^_]*?[^\\s_])_(?![\\p{L}\\p{N}_])', // 6: italic
    '~~(?=\\S)([\\s\\S]*?\\S)~~', // 7: struck
    '\\[([^\\]\\n]+)\\]\\(([^)\\s]+)\\)', // 8, 9: link
    '(https?:\\/\\/[^\\s<>]*[^\\s<>.,;:!?\'")\\]])', // 10: bare link
    '(?<![\\p{L}\\p{N}_.@+-])@([\\p{L}\\p{N}_](?:[\\p{L}\\p{N}\\p{M}_.-]*[\\p{L}\\p{N}\\p{M}_])?)', // 11: @name
  ].join('|'),
  'gu',
);

/** The address if it is one a link may go to (http, https, mailto), else null. */
export function safeHref(raw) {
  try {
    const url = new URL(raw);
    return ['http:', 'https:', 'mailto:'].includes(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

function element(tag, className, children = []) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const child of children) node.append(child);
  return node;
}

function link(text, href) {
  const a = element('a', '', [text]);
  a.href = href;
  a.rel = 'noopener noreferrer nofollow';
  a.target = '_blank';
  return a;
}

/** Inline text as nodes. `names`: the known names (lower case); a known @name is marked. */
export function renderInline(text, names) {
  const out = [];
  let at = 0;
  // matchAll works on its own copy of the expression: the recursion below cannot move this loop's place.
  for (const m of text.matchAll(INLINE)) {
    if (m.index > at) out.push(document.createTextNode(text.slice(at, m.index)));
    at = m.index + m[0].length;
    if (m[2] !== undefined) out.push(element('code', '', [m[2]]));
    else if (m[3] !== undefined || m[4] !== undefined)
      out.push(element('strong', '', renderInline(m[3] ?? m[4], names)));
    else if (m[5] !== undefined || m[6] !== undefined) out.push(element('em', '', renderInline(m[5] ?? m[6], names)));
    else if (m[7] !== undefined) out.push(element('del', '', renderInline(m[7], names)));
    else if (m[8] !== undefined) {
      const href = safeHref(m[9]);
      out.push(href ? link(m[8], href) : document.createTextNode(m[0]));
    } else if (m[10] !== undefined) {
      const href = safeHref(m[10]);
      out.push(href ? link(m[10], href) : document.createTextNode(m[10]));
    } else if (m[11] !== undefined) {
      const known = names?.has(m[11].toLowerCase());
      out.push(known ? element('span', 'mention', [m[0]]) : document.createTextNode(m[0]));
    }
  }
  if (at < text.length) out.push(document.createTextNode(text.slice(at)));
  return out;
}

/** Lines joined with line breaks, each rendered inline. */
function lines(list, names) {
  const out = [];
  list.forEach((line, i) => {
    if (i > 0) out.push(document.createElement('br'));
    out.push(...renderInline(line, names));
  });
  return out;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}\d{1,9}[.)]\s+(.*)$/;
const HEADING = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;

/** A message's text as a fragment of safe nodes. */
export function renderMarkdown(text, names) {
  const fragment = document.createDocumentFragment();
  const source = text.replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  const take = (pattern) => {
    const taken = [];
    for (let m = pattern.exec(source[i] ?? ''); i < source.length && m; m = pattern.exec(source[i] ?? '')) {
      taken.push(m[1]);
      i++;
    }
    return taken;
  };
  while (i < source.length) {
    const line = source[i];
    const fence = FENCE.exec(line);
    if (fence) {
      const body = [];
      i++;
      while (i < source.length && !source[i].trim().startsWith(fence[1])) body.push(source[i++]);
      i++;
      const code = element('code', fence[2] ? `language-${fence[2]}` : '', [body.join('\n')]);
      fragment.append(element('pre', '', [code]));
    } else if (!line.trim()) {
      i++;
    } else if (QUOTE.test(line)) {
      fragment.append(element('blockquote', '', [element('p', '', lines(take(QUOTE), names))]));
    } else if (BULLET.test(line) || NUMBERED.test(line)) {
      const numbered = NUMBERED.test(line) && !BULLET.test(line);
      const items = take(numbered ? NUMBERED : BULLET);
      fragment.append(
        element(
          numbered ? 'ol' : 'ul',
          '',
          items.map((item) => element('li', '', renderInline(item, names))),
        ),
      );
    } else if (HEADING.test(line)) {
      fragment.append(element('p', 'heading', [element('strong', '', renderInline(HEADING.exec(line)[1], names))]));
      i++;
    } else {
      const paragraph = [];
      while (
        i < source.length &&
        source[i].trim() &&
        !FENCE.test(source[i]) &&
        !QUOTE.test(source[i]) &&
        !BULLET.test(source[i]) &&
        !NUMBERED.test(source[i]) &&
        !HEADING.test(source[i])
      ) {
        paragraph.push(source[i++]);
      }
      fragment.append(element('p', '', lines(paragraph, names)));
    }
  }
  return fragment;
}

// Markdown for the web room: a safe subset, rendered by building DOM nodes. Text from people and agents only ever
// becomes text nodes (textContent), never HTML: `<img src=x onerror=…>` and `<script>` show as the characters they
// are. Links keep only http, https and mailto addresses.
//
// Blocks: paragraphs (single newlines kept), fenced code (```), quotes (>), lists (-, *, +, 1.), headings (#).
// Inline: `code`, **bold**, __bold__, *italic*, _italic_, ~~struck~~, [text](url), bare http(s) links, @names.
//
// Any text renders in time linear in its length, without recursion: one pass over each line with a stack of open
// emphasis (at most MAX_DEPTH deep; deeper markers stay as they are typed), and every search for a closing mark
// moves only forwards. An unclosed marker shows as the characters it is.

/** Emphasis nested deeper than this shows its markers as text. */
const MAX_DEPTH = 16;
/** Inline elements (emphasis, code, links, names) one message makes at most; past them its marks show as text. */
const MAX_ELEMENTS = 2_000;
const TAGS = { '*': ['em', 'strong'], _: ['em', 'strong'], '~': ['del', 'del'] };
const WORD = /[\p{L}\p{N}_]/u;
const SPACE = /\s/u;
const BEFORE_NAME = /[\p{L}\p{N}_.@+-]/u;
const NAME = /[\p{L}\p{N}_](?:[\p{L}\p{N}\p{M}_.-]*[\p{L}\p{N}\p{M}_])?/uy;
const URL_END = /[\s<>]/g;
// A bare link ends before trailing punctuation and emphasis marks (`**https://example.com**` is a bold link).
const LINK_TRAIL = `.,;:!?'")]*_~`;

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

/**
 * The next place at or after `at` where `pattern` (a /g expression) matches, or -1. The places asked for only grow,
 * so a search resumes where the last one stopped instead of starting again.
 */
function forward(text, pattern) {
  let from = -1;
  let found = -1;
  return (at) => {
    if (from === -1 || at < from || (found !== -1 && at > found)) {
      pattern.lastIndex = at;
      found = pattern.exec(text)?.index ?? -1;
      from = at;
    }
    return found;
  };
}

/** For code spans: where the next run of exactly `length` backticks after `at` starts, or -1. */
function backtickRuns(text) {
  const runs = new Map();
  for (let i = text.indexOf('`'); i !== -1; ) {
    let j = i;
    while (text[j] === '`') j++;
    if (!runs.has(j - i)) runs.set(j - i, []);
    runs.get(j - i).push(i);
    i = text.indexOf('`', j);
  }
  const next = new Map();
  return (at, length) => {
    const list = runs.get(length) ?? [];
    let k = next.get(length) ?? 0;
    while (k < list.length && list[k] <= at) k++;
    next.set(length, k);
    return k < list.length ? list[k] : -1;
  };
}

/** Whether a character is white space (the ends of the text count as space); ASCII is decided without a regex. */
function isSpace(c) {
  if (c === undefined) return true;
  const code = c.charCodeAt(0);
  return code < 128 ? code === 32 || (code >= 9 && code <= 13) : SPACE.test(c);
}

/** Whether a character is a letter, a digit or `_`. */
function isWord(c) {
  if (c === undefined) return false;
  const code = c.charCodeAt(0);
  if (code >= 128) return WORD.test(c);
  const lower = code | 32; // A-Z as a-z
  return (lower >= 97 && lower <= 122) || (code >= 48 && code <= 57) || code === 95;
}

/** Whether a run of `mark` between `before` and `after` (undefined at the ends) may open and may close emphasis. */
function flanks(mark, before, after) {
  const spaceBefore = isSpace(before);
  const spaceAfter = isSpace(after);
  // `_` never opens or closes inside a word (snake_case_names stay as they are).
  const wordBefore = mark === '_' && isWord(before);
  const wordAfter = mark === '_' && isWord(after);
  return { opens: !spaceAfter && !wordBefore, closes: !spaceBefore && !wordAfter };
}

/**
 * Inline text as nodes. `names`: the known names (lower case); a known @name is marked. `budget.left`: how many more
 * inline elements the message may make (shared by its lines).
 */
export function renderInline(text, names, budget = { left: MAX_ELEMENTS }) {
  // The open emphasis, innermost last; each holds what has been read inside it so far (strings and nodes).
  const root = { mark: '', count: 0, children: [] };
  const stack = [root];
  const opened = { '*': 0, _: 0, '~': 0 };
  const nextBracket = forward(text, /\]/g);
  const nextParen = forward(text, /\)/g);
  const nextSpace = forward(text, /\s/gu);
  const nextCode = backtickRuns(text);
  let plain = 0; // text[plain, i) is plain text not yet added
  const add = (item) => {
    const children = stack[stack.length - 1].children;
    const last = children.length - 1;
    if (typeof item === 'string' && typeof children[last] === 'string') children[last] += item;
    else children.push(item);
  };
  /** text[start, end) becomes `item` (or nothing yet); reading goes on at `end`. */
  const token = (start, end, item) => {
    if (start > plain) add(text.slice(plain, start));
    if (item !== undefined) add(item);
    plain = end;
    return end;
  };
  /**
   * Closes the innermost open emphasis of `mark` with up to `count` markers (two make bold, one italic): what is
   * inside it, markers opened inside and not closed as text. Returns how many markers it took.
   */
  const close = (mark, count) => {
    let k = stack.length - 1;
    while (stack[k].mark !== mark) k--;
    const opener = stack[k];
    const use = mark === '~' || (count >= 2 && opener.count >= 2) ? 2 : 1;
    const inside = opener.children;
    for (const frame of stack.splice(k + 1)) {
      opened[frame.mark]--;
      inside.push(frame.mark.repeat(frame.count));
      for (const child of frame.children) inside.push(child);
    }
    const node = element(TAGS[mark][use - 1], '', inside);
    budget.left--;
    opener.count -= use;
    if (opener.count > 0) opener.children = [node];
    else {
      stack.pop();
      opened[mark]--;
      add(node);
    }
    return use;
  };
  const emphasis = (i) => {
    const mark = text[i];
    let j = i;
    while (text[j] === mark) j++;
    let count = j - i;
    const { opens, closes } = flanks(mark, text[i - 1], text[j]);
    if ((mark === '~' && count !== 2) || (!opens && !closes) || budget.left <= 0) return j;
    token(i, j);
    while (closes && count > 0 && opened[mark] > 0) count -= close(mark, count);
    if (count > 0 && opens && stack.length <= MAX_DEPTH) {
      stack.push({ mark, count, children: [] });
      opened[mark]++;
    } else if (count > 0) add(mark.repeat(count));
    return j;
  };
  const code = (i) => {
    let j = i;
    while (text[j] === '`') j++;
    const end = nextCode(i, j - i);
    if (end === -1 || budget.left <= 0) return j;
    budget.left--;
    return token(i, end + (j - i), element('code', '', [text.slice(j, end)]));
  };
  const bracket = (i) => {
    const end = nextBracket(i + 1);
    if (end <= i + 1 || text[end + 1] !== '(' || budget.left <= 0) return i + 1;
    const paren = nextParen(end + 2);
    const space = nextSpace(end + 2);
    if (paren <= end + 2 || (space !== -1 && space < paren)) return i + 1;
    const href = safeHref(text.slice(end + 2, paren));
    const whole = text.slice(i, paren + 1);
    budget.left--;
    return token(i, paren + 1, href ? link(text.slice(i + 1, end), href) : whole);
  };
  const bare = (i) => {
    const prefix = text.startsWith('https://', i) ? 8 : text.startsWith('http://', i) ? 7 : 0;
    if (!prefix || budget.left <= 0) return i + 1;
    URL_END.lastIndex = i + prefix;
    let end = URL_END.exec(text)?.index ?? text.length;
    while (end > i + prefix && LINK_TRAIL.includes(text[end - 1])) end--;
    if (end === i + prefix) return i + 1;
    const href = safeHref(text.slice(i, end));
    budget.left--;
    return token(i, end, href ? link(text.slice(i, end), href) : text.slice(i, end));
  };
  const mention = (i) => {
    if (i > 0 && BEFORE_NAME.test(text[i - 1])) return i + 1;
    NAME.lastIndex = i + 1;
    const name = NAME.exec(text)?.[0];
    if (!name) return i + 1;
    const known = budget.left > 0 && names?.has(name.toLowerCase());
    if (known) budget.left--;
    return token(i, i + 1 + name.length, known ? element('span', 'mention', [`@${name}`]) : `@${name}`);
  };
  const readers = { '`': code, '*': emphasis, _: emphasis, '~': emphasis, '[': bracket, h: bare, '@': mention };
  let i = 0;
  while (i < text.length) {
    const read = readers[text[i]];
    i = read ? read(i) : i + 1;
  }
  if (text.length > plain) add(text.slice(plain));
  // What stayed open is text: its markers, then what was read inside it.
  const out = root.children;
  for (const frame of stack.slice(1)) {
    out.push(frame.mark.repeat(frame.count));
    for (const child of frame.children) out.push(child);
  }
  return out
    .filter((item) => item !== '')
    .map((item) => (typeof item === 'string' ? document.createTextNode(item) : item));
}

/** Lines joined with line breaks, each rendered inline. */
function lines(list, names, budget) {
  const out = [];
  list.forEach((line, i) => {
    if (i > 0) out.push(document.createElement('br'));
    for (const node of renderInline(line, names, budget)) out.push(node);
  });
  return out;
}

// Each block pattern is tried on one line and cannot backtrack over it more than once.
const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)$/;
const QUOTE = /^\s{0,3}>\s?([\s\S]*)$/;
const BULLET = /^\s{0,3}[-*+]\s+([\s\S]*)$/;
const NUMBERED = /^\s{0,3}\d{1,9}[.)]\s+([\s\S]*)$/;
const HEADING = /^\s{0,3}#{1,6}\s/;

const isFence = (line) => FENCE.exec(line.trimEnd());

/** A heading's text: without its leading #s and any closing #s. */
function headingText(line) {
  const text = line.trimStart().replace(/^#+/, '').trimEnd();
  let end = text.length;
  while (end > 0 && text[end - 1] === '#') end--;
  return text.slice(0, end).trim();
}

/** A message's text as a fragment of safe nodes. */
export function renderMarkdown(text, names) {
  const fragment = document.createDocumentFragment();
  const budget = { left: MAX_ELEMENTS };
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
    const fence = isFence(line);
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
      fragment.append(element('blockquote', '', [element('p', '', lines(take(QUOTE), names, budget))]));
    } else if (BULLET.test(line) || NUMBERED.test(line)) {
      const numbered = NUMBERED.test(line) && !BULLET.test(line);
      const items = take(numbered ? NUMBERED : BULLET);
      fragment.append(
        element(
          numbered ? 'ol' : 'ul',
          '',
          items.map((item) => element('li', '', renderInline(item, names, budget))),
        ),
      );
    } else if (HEADING.test(line)) {
      fragment.append(element('p', 'heading', [element('strong', '', renderInline(headingText(line), names, budget))]));
      i++;
    } else {
      const paragraph = [];
      while (
        i < source.length &&
        source[i].trim() &&
        !isFence(source[i]) &&
        !QUOTE.test(source[i]) &&
        !BULLET.test(source[i]) &&
        !NUMBERED.test(source[i]) &&
        !HEADING.test(source[i])
      ) {
        paragraph.push(source[i++]);
      }
      fragment.append(element('p', '', lines(paragraph, names, budget)));
    }
  }
  return fragment;
}

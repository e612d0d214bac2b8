/**
 * Untrusted input, marked: what the model reads from outside the room's people (a tool's output, a workspace file, an
 * upload's lines, a foreign bot's message, a quote) arrives inside a block the text cannot close early:
 *
 *   <untrusted source="tool:bash" id="123456789012345">
 *   …the data…
 *   </untrusted id="123456789012345">
 *
 * The id is a nonce the data cannot know: for a stored message, an HMAC of the message's id and the block's place
 * under a secret drawn when the process starts (so the same message renders to the same bytes on every turn, and a
 * provider's prompt cache keeps the history's prefix); for a tool result within a turn, fresh random digits. And
 * whatever the data holds that reads as one of these tags (`</untrusted`, in any case, with full-width or invisible
 * characters) loses its `<`: no text the bridge shows a model holds a real tag but the bridge's own.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { closesFence, fenceMarker } from '../room/text/code-spans.js';
import { stripControlTokens } from './control-tokens.js';

/** Where a block's text came from: `tool:<name>`, `upload`, `bot` (a foreign bot's message), `quote`. */
export type UntrustedSource = `tool:${string}` | 'upload' | 'bot' | 'quote';

/** Drawn once per process: ids cannot be predicted, and a message's ids hold while the process runs. */
const SECRET = randomBytes(32);

/**
 * Ids are 15 decimal digits: unguessable enough for text written before it is drawn, and always the same number of
 * tokens (digits are counted in threes), so a message's token count, kept in the store, holds in any process.
 */
const DIGITS = 15;
const SPAN = 10n ** BigInt(DIGITS);

const digitsOf = (bytes: Buffer) => (bytes.readBigUInt64BE(0) % SPAN).toString().padStart(DIGITS, '0');

/** The id of a block of a stored message: the same for the same `place` (message id and part) while the process runs. */
export function blockId(place: string): string {
  return digitsOf(createHmac('sha256', SECRET).update(place).digest());
}

/** A fresh id, for a block that is made once and kept (a tool's result within a turn). */
export function freshBlockId(): string {
  return digitsOf(randomBytes(8));
}

/**
 * `<`, its look-alikes and its HTML entities; a `/` and its full-width twin; `untrusted` letter by letter in any width
 * or case.
 */
const LESS_THAN = '(?:[<＜﹤]|&[lL][tT];|&#0*60;|&#[xX]0*3[cC];)';
const GAP = '[\\s\\p{Cf}]*';
const WORD = [...'untrusted']
  .map((c) => {
    const wide = (ch: string) => String.fromCodePoint((ch.codePointAt(0) ?? 0) + 0xfee0);
    return `[${c}${c.toUpperCase()}${wide(c)}${wide(c.toUpperCase())}]`;
  })
  .join('\\p{Cf}*');
const TAG_LIKE = new RegExp(`${LESS_THAN}(?=${GAP}[/／]?${GAP}${WORD})`, 'gu');

/** `text` with anything that reads as an untrusted block's tag defused: its `<` becomes `‹`. */
export function defuseTags(text: string): string {
  return text.replace(TAG_LIKE, '‹');
}

/** What any text the bridge shows a model goes through: control tokens out, tag look-alikes defused. */
export function cleanText(text: string): string {
  return defuseTags(stripControlTokens(text));
}

/** A source as an attribute: a tool's name is the model's to invent, so only plain characters are kept. */
function sourceAttribute(source: UntrustedSource): string {
  return source.replace(/[^A-Za-z0-9_.:-]/g, '').slice(0, 64) || 'unknown';
}

const OPEN = /<untrusted source="[^"\n]*" id="(\d+)">/y;
const CLOSE = /<\/untrusted id="(\d+)">/y;

/** `text` (cleaned here) as a block of data from `source`, under `id`. */
export function untrustedBlock(source: UntrustedSource, text: string, id: string): string {
  return `<untrusted source="${sourceAttribute(source)}" id="${id}">\n${cleanText(text)}\n</untrusted id="${id}">`;
}

/**
 * After a clip (head … note … tail) that may have cut through blocks: every block is closed again. A closing tag
 * whose opening was cut away, and a tag cut in two, are left out; a block whose end was cut is closed at the end of
 * the text. Sound because cleaned data holds no `<untrusted`: every tag is the bridge's own.
 */
export function rebalanced(text: string): string {
  let out = '';
  let open: string | undefined;
  let i = 0;
  while (i < text.length) {
    const at = text.indexOf('<', i);
    if (at < 0) {
      out += text.slice(i);
      break;
    }
    out += text.slice(i, at);
    OPEN.lastIndex = at;
    CLOSE.lastIndex = at;
    const opening = OPEN.exec(text);
    const closing = opening ? null : CLOSE.exec(text);
    if (opening) {
      if (open !== undefined) out += `\n</untrusted id="${open}">\n`;
      open = opening[1];
      out += opening[0];
      i = at + opening[0].length;
    } else if (closing) {
      if (closing[1] === open) {
        out += closing[0];
        open = undefined;
      }
      i = at + closing[0].length;
    } else if (/^<\/?untrusted/.test(text.slice(at, at + 11))) {
      // A tag cut by the clip: dropped up to the end of its line.
      const end = text.indexOf('\n', at);
      i = end < 0 ? text.length : end;
    } else {
      out += '<';
      i = at + 1;
    }
  }
  return open === undefined ? out : `${out}\n</untrusted id="${open}">`;
}

const QUOTE_LINE = /^ {0,3}>/;

/**
 * A person's message with each run of quoted lines (`> …`, outside code fences: a forward or share, or someone else's
 * words quoted) made a block of data; the rest is left as it is. `idOf(n)` gives the n-th quote's id.
 */
export function quotesMarked(text: string, idOf: (index: number) => string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let quote: string[] = [];
  let count = 0;
  let fence: string | undefined;
  const flush = () => {
    if (quote.length === 0) return;
    out.push(untrustedBlock('quote', quote.join('\n'), idOf(count++)));
    quote = [];
  };
  for (const line of lines) {
    if (fence === undefined && QUOTE_LINE.test(line)) {
      quote.push(line);
      continue;
    }
    flush();
    if (fence === undefined) fence = fenceMarker(line);
    else if (closesFence(line, fence)) fence = undefined;
    out.push(line);
  }
  flush();
  return out.join('\n');
}

/**
 * What an agent's reply says about the turn: a pass (`[pass]` and the ways models write it), a hand-back
 * (`<world>pass</world>`), or a message; and whether a message moves anything forward.
 */
import { hasFence, inlineCode, segments, stripCode } from './code-spans.js';

/** What an agent's reply means for the room. */
export type ReplyOutcome =
  | { readonly kind: 'pass' }
  /** `text` is the reply without the tag ('' when the tag was all there was). */
  | { readonly kind: 'world-pass'; readonly text: string }
  | { readonly kind: 'message'; readonly text: string };

export const PASS = '[pass]';
const WORLD_PASS = /<world>\s*pass\s*<\/world>/i;
const WORLD_PASS_ALL = /<world>\s*pass\s*<\/world>/gi;
const ONLY_TAG = /^\s*<world>\s*pass\s*<\/world>\s*$/i;
/** A code span holding only the tag, as models write it: `` `<world>pass</world>` ``. */
const WORLD_PASS_SPAN = /(`+)\s*<world>\s*pass\s*<\/world>\s*\1/gi;
/** The words a pass may carry after it ("[pass] nothing to add"). */
const REMARK_WORDS = 8;

/**
 * A pass: `[pass]` in any case, possibly wrapped in backticks or quotes, possibly followed by punctuation or one
 * short remark on the same line ("[pass].", "`[pass]`", "[PASS] nothing to add"); an empty reply too. A reply
 * that only mentions [pass] inside a sentence is a message.
 */
export function isPass(reply: string): boolean {
  const text = reply.trim();
  if (text === '') return true;
  const bare = text.replace(/^[`"'“‘*_]+/, '');
  if (!bare.toLowerCase().startsWith(PASS)) return false;
  const rest = bare.slice(PASS.length).replace(/^[`"'”’*_]+/, '');
  if (rest.includes('\n')) return false;
  const words = rest
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);
  return words.length <= REMARK_WORDS;
}

/**
 * Classifies a reply: a pass, a hand-back, or a message to post. A hand-back is `<world>pass</world>` outside
 * code, or a reply whose only inline code span is exactly that tag (models quote it); inside a fenced block, or
 * beside other code spans, the tag is literal text. A hand-back keeps the reply: the text without the tag is posted.
 */
export function classifyReply(reply: string): ReplyOutcome {
  const text = reply.trim();
  const spans = inlineCode(text);
  const quotedTag = spans.length === 1 && ONLY_TAG.test(spans[0] ?? '') && !hasFence(text);
  if (WORLD_PASS.test(stripCode(text)) || quotedTag) {
    const rest = text.replace(WORLD_PASS_SPAN, '').replace(WORLD_PASS_ALL, '').trim();
    return { kind: 'world-pass', text: isPass(rest) ? '' : rest };
  }
  if (isPass(text)) return { kind: 'pass' };
  return { kind: 'message', text };
}

/** Below this, a preview would flicker a few words (and a pass may still be being written): nothing is shown. */
const MIN_SHOWN = 12;
const TAG = '<world>pass</world>';

/**
 * What of a reply still being written may be shown (platforms that stream by edits), read by the rules the room
 * reads the finished reply by (`classifyReply`): nothing while it is, or may still become, a pass; a hand-back's
 * text without its tag; never a tag half written at the end outside code. A tag inside code stays, as it is posted.
 */
export function shownWhileWriting(partial: string): string {
  const outcome = classifyReply(partial);
  if (outcome.kind === 'pass') return '';
  const text = withoutOpenTag(outcome.text).trim();
  const bare = text.replace(/^[`"'“‘*_]+/, '').toLowerCase();
  if (PASS.startsWith(bare) || text.length < MIN_SHOWN) return '';
  return text;
}

/** The text without a hand-back tag still being written at its end (`<wor`), unless that is inside code. */
function withoutOpenTag(text: string): string {
  const begun = (at: number) => TAG.startsWith(text.slice(at).replace(/\s+/g, '').toLowerCase());
  let open = text.lastIndexOf('<');
  // The tag's own `<` (of `</world>`) may come after the one it starts with.
  while (open > 0 && !begun(open) && text.length - open < TAG.length) open = text.lastIndexOf('<', open - 1);
  if (open < 0 || !begun(open)) return text;
  const last = segments(text).at(-1);
  const inProse = last?.kind === 'text' && open >= text.length - last.value.length;
  return inProse ? text.slice(0, open) : text;
}

/** The bridge's line when an agent hands control back. */
export function worldPassText(agent: string): string {
  return `@human ${agent} is passing control to you`;
}

/** Words that only acknowledge; a message made of nothing else moves nothing forward. */
const ACK_WORDS = new Set(
  (
    'ok okay k thanks thank you thx ty cheers great perfect cool nice awesome got it noted sounds good sure will do ' +
    "understood roger agreed likewise welcome you're youre no problem np anytime glad to help much so a lot again " +
    'all right alright yes yep indeed exactly same here and the for that this me too as well'
  ).split(' '),
);

/** Lower-cased words of the text, with mentions, code, punctuation and emoji removed. */
function words(text: string): string[] {
  return stripCode(text)
    .toLowerCase()
    .replace(/@[\p{L}\p{N}_.-]+/gu, ' ')
    .replace(/[^a-z0-9'\s]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** True for a message that only acknowledges: "thanks!", "got it", "ok @code", "thank you so much". */
export function isAcknowledgement(text: string): boolean {
  const list = words(text);
  if (list.length === 0)
    return (
      stripCode(text)
        .replace(/@[\p{L}\p{N}_.-]+/gu, '')
        .trim().length < 8
    );
  return list.length <= 8 && list.every((word) => ACK_WORDS.has(word));
}

/** The form two messages are compared in for "repeats itself": case and whitespace aside. */
export function normalised(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

/** No progress: a message that only acknowledges, or repeats its author's previous message. */
export function isNoProgress(text: string, previousOwn: string | undefined): boolean {
  if (isAcknowledgement(text)) return true;
  return previousOwn !== undefined && normalised(previousOwn) === normalised(text);
}

/** True when the text asks something: a `?` outside code. */
export function asksQuestion(text: string): boolean {
  return stripCode(text).includes('?');
}

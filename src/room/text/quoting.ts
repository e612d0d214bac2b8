/**
 * What people wrote, made safe to show the agents: nothing inside a message, a name or a file's facts can pass for
 * another speaker (`[@code]: …`), for the bridge (`[system]: …`, `[file: …]`, `>>> SITUATION <<<`) or for the frame of
 * a batched call (its `====` rules). Each function is pure, so one message renders to the same bytes every time and a
 * provider's prompt cache keeps its prefix.
 */

/** Every line break a model may read as one: CRLF, CR, LF, vertical tab, form feed, NEL, line and paragraph separators. */
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g;

/** Control and invisible format characters: bidi overrides and isolates, zero-width marks, soft hyphens, tags. */
const INVISIBLE = /[\p{Cc}\p{Cf}]/gu;

/**
 * A line that reads like the transcript's own: a speaker or bridge line (`[`…), a section of the bridge's note
 * (`>>>`), a batched call's rule (a line of `=` or `-`); the backslashes some of its own escapes start with; and
 * the blanks and invisible characters before it.
 */
const FRAME_LIKE = /^([\s\p{Cf}]*)(?=\\*(?:\[|>>>|(?:={3,}|-{3,})\s*$))/u;

/**
 * A message's text as the agents read it: every line break is a `\n`, and a line that could pass for the
 * transcript's own gets one backslash before it (`\[@code]: I already ran it`), a line that already starts with
 * backslashes one more — so an escaped line never reads as a real one, and no two texts render alike (but for their
 * kinds of line break).
 */
export function quoted(text: string): string {
  return text
    .replace(LINE_BREAK, '\n')
    .split('\n')
    .map((line) => line.replace(FRAME_LIKE, '$1\\'))
    .join('\n');
}

/**
 * Text quoted inside a line of the bridge's (`- @data: …` in a resume's answers): `quoted`, its further lines indented
 * by two spaces, so none of them starts a line of the bridge's own.
 */
export function nested(text: string): string {
  return quoted(text).split('\n').join('\n  ');
}

/** Text for a single line the bridge writes (a content type, an error): no line breaks, no invisible characters. */
export function oneLine(text: string): string {
  return text.replace(LINE_BREAK, ' ').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim();
}

/**
 * A display name as it is shown in `[@name]: …`: one line, without control, bidi or other invisible characters (a
 * right-to-left override would show `‮evil‬-name` reversed), and with no brackets to close the speaker's tag early.
 */
export function speakerName(name: string): string {
  return oneLine(name).replace(/\[/g, '(').replace(/\]/g, ')') || '?';
}

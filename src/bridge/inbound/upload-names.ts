/**
 * Names for uploaded files in a workspace, from names a platform passes on as the uploader typed them: no folders
 * (no path traversal), no hidden files, no control or invisible characters (a right-to-left override makes
 * `‮gnp.exe` look like `exe.png`), a sane length; and the line the agents read.
 */
import { oneLine } from '../../room/text/quoting.js';

const MAX_NAME = 120;

/** A file name safe to create in the workspace's `uploads/` folder. */
export function safeFileName(raw: string): string {
  const base = raw.split(/[\\/]/).pop() ?? '';
  let name = base
    .normalize('NFC')
    // Control and invisible format characters (bidi overrides, zero-width marks), and line or paragraph separators.
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, '')
    .replace(/[<>:"|?*]/g, '_')
    .trim()
    // A leading dot would hide the file (and `..` is no name).
    .replace(/^[.\s]+/, '');
  if (!name) name = 'file';
  if (name.length <= MAX_NAME) return name;
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
  return name.slice(0, MAX_NAME - extension.length) + extension;
}

/** `name`, then `name-2.ext`, `name-3.ext`, … for when a file of that name is already there. */
export function* nameCandidates(name: string): Generator<string> {
  yield name;
  const dot = name.lastIndexOf('.');
  const [stem, extension] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  for (let n = 2; ; n += 1) yield `${stem}-${n}${extension}`;
}

/** Bytes as people read them: `812 B`, `1.2 KB`, `31.5 MB`. */
export function describeSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A media type as RFC 6838 spells one (`type/subtype`, restricted name characters only). */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;

/** The content type the uploader's client claimed, when it is one: anything else is not shown. */
export function mediaType(claimed: string | undefined): string | undefined {
  const type = claimed?.split(';')[0]?.trim();
  return type && MEDIA_TYPE.test(type) ? type.toLowerCase() : undefined;
}

/**
 * The line the agents read for a file: `[file: uploads/sales.csv (text/csv, 1.2 KB)]`, plus what went wrong. One line
 * whatever the platform passed on: the name is a safe one (`safeFileName`), the content type a valid one or none, the
 * problem flat.
 */
export function fileLine(
  name: string,
  file: { mimeType?: string | undefined; size: number },
  problem?: string,
): string {
  const facts = [mediaType(file.mimeType), describeSize(file.size)].filter(Boolean).join(', ');
  const trouble = problem ? oneLine(problem) : '';
  return `[file: ${name} (${facts})${trouble ? ` ${trouble}` : ''}]`;
}

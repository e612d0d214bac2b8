/**
 * Names for uploaded files in a workspace, from names a platform passes on as the uploader typed them: no folders
 * (no path traversal), no hidden files, no control characters, a sane length; and the line the agents read.
 */

const MAX_NAME = 120;

/** A file name safe to create in the workspace's `uploads/` folder. */
export function safeFileName(raw: string): string {
  const base = raw.split(/[\\/]/).pop() ?? '';
  let name = base
    .normalize('NFC')
    .replace(/\p{Cc}/gu, '')
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

/** The line the agents read for a file: `[file: uploads/sales.csv (text/csv, 1.2 KB)]`, plus what went wrong. */
export function fileLine(
  name: string,
  file: { mimeType?: string | undefined; size: number },
  problem?: string,
): string {
  const facts = [file.mimeType?.split(';')[0]?.trim(), describeSize(file.size)].filter(Boolean).join(', ');
  return `[file: ${name} (${facts})${problem ? ` ${problem}` : ''}]`;
}

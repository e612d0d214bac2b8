/**
 * Just enough of the tar format for the engine's archive API (PUT/GET /containers/{id}/archive): packing
 * folders, files and symlinks owned by the sandbox user, and reading the first file of an archive. Long names
 * go in a PAX header, which the engine understands.
 */
import type { Readable } from 'node:stream';

const BLOCK = 512;

export interface TarEntry {
  /** Relative POSIX path; `.` is the folder the archive is unpacked into. */
  readonly name: string;
  readonly type: 'file' | 'directory' | 'symlink';
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly content?: Uint8Array;
  readonly linkTarget?: string;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(name: string, entry: TarEntry, size: number, type: string): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name.slice(0, 100), 0, 'utf8');
  block.write(octal(entry.mode & 0o7777, 8), 100, 'ascii');
  block.write(octal(entry.uid, 8), 108, 'ascii');
  block.write(octal(entry.gid, 8), 116, 'ascii');
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(Math.floor(Date.now() / 1000), 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write(type, 156, 'ascii');
  if (entry.linkTarget && type === '2') block.write(entry.linkTarget.slice(0, 100), 157, 'utf8');
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

function padded(data: Uint8Array): Buffer[] {
  const rest = data.length % BLOCK;
  return rest === 0 ? [Buffer.from(data)] : [Buffer.from(data), Buffer.alloc(BLOCK - rest)];
}

/** A PAX record `<length> key=value\n`, whose length counts its own digits. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const base = Buffer.byteLength(body);
  let length = base + 1;
  while (length !== base + String(length).length) length = base + String(length).length;
  return `${length}${body}`;
}

/** Packs the entries into one tar archive (ustar, PAX headers for long names and link targets). */
export function packTar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const name = entry.type === 'directory' && !entry.name.endsWith('/') ? `${entry.name}/` : entry.name;
    const long = Buffer.byteLength(name) > 100 || Buffer.byteLength(entry.linkTarget ?? '') > 100;
    if (long) {
      const records = Buffer.from(
        paxRecord('path', name) + (entry.linkTarget ? paxRecord('linkpath', entry.linkTarget) : ''),
      );
      parts.push(header('PaxHeader', entry, records.length, 'x'), ...padded(records));
    }
    const content = entry.type === 'file' ? (entry.content ?? new Uint8Array()) : new Uint8Array();
    const type = entry.type === 'file' ? '0' : entry.type === 'directory' ? '5' : '2';
    parts.push(header(name, entry, content.length, type), ...padded(content));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}

/**
 * The first regular file of an archive stream: at most `limit` bytes of it (the stream is then left, not
 * read to its end) and the size its header gives. Undefined when the archive holds no regular file first.
 */
export async function readFirstFile(
  stream: Readable,
  limit: number,
): Promise<{ bytes: Buffer; size: number } | undefined> {
  let buffered = Buffer.alloc(0);
  let size: number | undefined;
  const chunks: Buffer[] = [];
  let taken = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (size === undefined) {
        buffered = Buffer.concat([buffered, chunk]);
        // Skip PAX / GNU long-name headers and their data until the file's own header.
        while (size === undefined && buffered.length >= BLOCK) {
          const type = String.fromCharCode(buffered[156] ?? 0);
          const length = Number.parseInt(
            buffered.subarray(124, 136).toString('ascii').replace(/\0.*$/, '').trim() || '0',
            8,
          );
          if (buffered.subarray(0, BLOCK).every((byte) => byte === 0)) return undefined;
          if (type === 'x' || type === 'g' || type === 'L' || type === 'K') {
            const skip = BLOCK + Math.ceil(length / BLOCK) * BLOCK;
            if (buffered.length < skip) break;
            buffered = buffered.subarray(skip);
            continue;
          }
          if (type !== '0' && type !== '\0' && type !== '7') return undefined;
          size = length;
          buffered = buffered.subarray(BLOCK);
        }
        if (size === undefined) continue;
        const first = buffered.subarray(0, Math.min(limit, size));
        chunks.push(first);
        taken += first.length;
      } else {
        const want = Math.min(limit, size) - taken;
        const part = chunk.subarray(0, want);
        chunks.push(part);
        taken += part.length;
      }
      if (taken >= Math.min(limit, size)) break;
    }
  } finally {
    stream.destroy();
  }
  if (size === undefined) return undefined;
  return { bytes: Buffer.concat(chunks), size };
}

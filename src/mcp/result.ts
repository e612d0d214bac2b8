/**
 * An MCP tool's result as the model reads it: text clipped by the command output rule (the first 5,000 and last
 * 2,000 characters of anything over 10,000), images, audio and embedded resources written as files into the room's
 * workspace with one line naming each (the workspace port uploads use), links named.
 */
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { WorkspaceFiles } from '../ports.js';
import { describeFsError, WORKSPACE_MOUNT } from '../tools/workspace-path.js';

/** The command output rule (sandbox/output-buffer.ts): what a tool's text may put into a turn. */
export const OUTPUT_LIMIT = 10_000;
const OUTPUT_HEAD = 5_000;
const OUTPUT_TAIL = 2_000;
const TRUNCATION_MARKER = '\n... [truncated] ...\n';

/** Where a server's files go, under the workspace. */
export const MCP_FILES_FOLDER = 'mcp-files';
/** A single file from a result larger than this is not written. */
const FILE_LIMIT_BYTES = 20 * 1024 * 1024;

export function clipOutput(text: string): string {
  if (text.length <= OUTPUT_LIMIT) return text;
  return text.slice(0, OUTPUT_HEAD) + TRUNCATION_MARKER + text.slice(-OUTPUT_TAIL);
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/mpeg': 'mp3',
  'audio/ogg': 'ogg',
  'application/json': 'json',
  'application/pdf': 'pdf',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/html': 'html',
  'text/csv': 'csv',
};

/** Where the files of a result are written (absent: the room has no workspace, and each is named as not kept). */
export interface FileSink {
  readonly files: WorkspaceFiles | undefined;
  /** Rejects when the workspace has no room for `bytes` more. */
  checkDisk?(bytes: number): Promise<void>;
}

/** A name for a file from a resource's URI (its last part, made plain) or a fresh one. */
function fileName(server: string, kind: string, mimeType: string | undefined, uri?: string): string {
  const ext = (mimeType && EXTENSIONS[mimeType.split(';')[0]?.trim() ?? '']) ?? 'bin';
  const fromUri = uri
    ?.split(/[/?#]/)
    .filter(Boolean)
    .at(-1)
    ?.replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '')
    .slice(0, 80);
  const stamp = randomBytes(4).toString('hex');
  const base = fromUri ? `${stamp}-${fromUri}` : `${kind}-${stamp}`;
  return `${server}/${base}${base.includes('.') ? '' : `.${ext}`}`;
}

async function saved(sink: FileSink, rel: string, bytes: Uint8Array, what: string): Promise<string> {
  if (!sink.files) return `[${what}: not kept (this room has no workspace)]`;
  if (bytes.byteLength > FILE_LIMIT_BYTES) return `[${what}: not kept (over ${FILE_LIMIT_BYTES / 1024 / 1024} MB)]`;
  try {
    await sink.checkDisk?.(bytes.byteLength);
    await sink.files.write(`${MCP_FILES_FOLDER}/${rel}`, bytes);
  } catch (error) {
    return `[${what}: not kept (${error instanceof Error && !('code' in error) ? error.message : describeFsError(error)})]`;
  }
  return `[${what} saved as ${WORKSPACE_MOUNT}/${MCP_FILES_FOLDER}/${rel} (${bytes.byteLength} bytes)]`;
}

/** The result as one text for the model (clipped), the files written on the way. */
export async function resultText(server: string, result: CallToolResult, sink: FileSink): Promise<string> {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    switch (item.type) {
      case 'text':
        parts.push(item.text);
        break;
      case 'image':
      case 'audio': {
        const bytes = Buffer.from(item.data, 'base64');
        const rel = fileName(server, item.type, item.mimeType);
        parts.push(await saved(sink, rel, bytes, `${item.type} (${item.mimeType})`));
        break;
      }
      case 'resource': {
        const { resource } = item;
        const bytes = 'text' in resource ? Buffer.from(resource.text, 'utf8') : Buffer.from(resource.blob, 'base64');
        const rel = fileName(server, 'resource', resource.mimeType, resource.uri);
        parts.push(await saved(sink, rel, bytes, `resource ${resource.uri}`));
        break;
      }
      case 'resource_link':
        parts.push(`[resource link: ${item.uri}${item.name ? ` (${item.name})` : ''}]`);
        break;
      default:
        parts.push(`[content of type ${(item as { type: string }).type} left out]`);
    }
  }
  if (parts.length === 0 && result.structuredContent !== undefined) {
    parts.push(JSON.stringify(result.structuredContent));
  }
  return clipOutput(parts.join('\n'));
}

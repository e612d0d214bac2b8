/**
 * A Discord attachment as a file the bridge can fetch: from Discord's CDN (or the host of DISCORD_API_URL) only,
 * never from another address a payload might name. Attachment links are signed, so no token goes with them.
 */
import type { InboundFile } from '../../src/ports.js';
import { download } from '../shared/download.js';
import type { AttachmentFacts } from './inbound.js';

/** Where Discord serves attachments. */
const CDN_ORIGINS = ['https://cdn.discordapp.com', 'https://media.discordapp.net'];

export function attachmentFile(
  attachment: AttachmentFacts,
  options: { readonly apiUrl: string | undefined; readonly maxBytes: number },
): InboundFile {
  const origins = new Set([...CDN_ORIGINS, ...(options.apiUrl ? [new URL(options.apiUrl).origin] : [])]);
  return {
    name: attachment.name,
    mimeType: attachment.contentType,
    size: attachment.size,
    download: (signal) => download(attachment.url, { origins, maxBytes: options.maxBytes, signal }),
  };
}

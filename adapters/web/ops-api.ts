/**
 * The operator console's API (operators only, checked before): every room of every platform as it is now, any
 * room's messages with the reasons the room recorded about each, and `/pass`, `/reset`, `/privacy` (and `/status`)
 * for any room, carried out as an operator's command in that room.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { AdapterSink, CommandName } from '../../src/ports.js';
import type { Viewer } from './access.js';
import { wireMessage } from './connections.js';
import { readBody, refuse, sendJson } from './http.js';

/** Messages per page in the console. */
const PAGE = 30;

const commandBody = z.object({
  room: z.string().min(3).max(300),
  name: z.enum(['pass', 'reset', 'privacy', 'status', 'approve', 'deny', 'pair']),
  args: z.string().max(100).default(''),
});

export interface OpsDeps {
  readonly sink: () => AdapterSink | undefined;
  /** Who has each web room open now. */
  readonly online: () => Record<string, string[]>;
}

export class OpsApi {
  constructor(private readonly deps: OpsDeps) {}

  /** Answers `/api/ops/...`; false when the path is none of its own. */
  async handle(request: IncomingMessage, response: ServerResponse, viewer: Viewer, url: URL): Promise<boolean> {
    const sink = this.deps.sink();
    const route = `${request.method} ${url.pathname}`;
    if (route === 'GET /api/ops/overview') {
      if (!sink?.overview) return unavailable(response);
      sendJson(response, 200, { ...(await sink.overview()), online: this.deps.online() });
      return true;
    }
    if (route === 'GET /api/ops/messages') {
      if (!sink?.transcript || !sink.decisions) return unavailable(response);
      const room = url.searchParams.get('room') ?? '';
      const before = Number(url.searchParams.get('before'));
      const page = await sink.transcript(room, { limit: PAGE, ...(before > 0 ? { before } : {}) });
      const seqs = page.flatMap((m) => (m.seq === null ? [] : [m.seq]));
      const why = seqs.length > 0 ? await sink.decisions(room, Math.min(...seqs), Math.max(...seqs)) : [];
      sendJson(response, 200, {
        room,
        messages: page.map((m) => ({
          ...wireMessage(m),
          seq: m.seq,
          why: why.filter((w) => w.seq === m.seq).map((w) => ({ at: w.at, record: w.record })),
        })),
        older: page.length >= PAGE ? (page[0]?.cursor ?? null) : null,
      });
      return true;
    }
    if (route === 'POST /api/ops/command') {
      if (!sink) return unavailable(response);
      let body: z.infer<typeof commandBody>;
      try {
        body = commandBody.parse(JSON.parse((await readBody(request, 4096)).toString('utf8')));
      } catch {
        refuse(response, 400, 'expected { room, name: pass | reset | privacy | status | approve | deny | pair, args }');
        return true;
      }
      const at = body.room.indexOf(':');
      if (at <= 0) {
        refuse(response, 400, `"${body.room}" is not a room key (platform:channel)`);
        return true;
      }
      const answer = await sink.command({
        platform: body.room.slice(0, at),
        channel: body.room.slice(at + 1),
        name: body.name as CommandName,
        args: body.args.trim(),
        user: { id: `web:${viewer.name.toLowerCase()}`, name: viewer.name },
        isOperator: true,
        fromConsole: true,
      });
      sendJson(response, 200, { answer });
      return true;
    }
    return false;
  }
}

function unavailable(response: ServerResponse): true {
  refuse(response, 503, 'the bridge is not running');
  return true;
}

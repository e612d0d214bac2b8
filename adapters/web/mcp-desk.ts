/**
 * What the MCP endpoint's tools reach of the bridge, from the web room: the rooms (every room the bridge keeps, the
 * web rooms postable), a room's stored messages, a post as a person's message in a web room (the page's own path),
 * and a command carried out as that person's in the room, told to the room's humans as one from the console is.
 */
import type { McpRoom, OperatorDesk } from '../../src/mcp-serve/server.js';
import type { AdapterSink, CommandName } from '../../src/ports.js';
import type { WebIdentity } from '../../src/store/port.js';
import { type Connections, MAX_TEXT, WEB_PLATFORM } from './connections.js';

export function webDesk(rooms: readonly string[], connections: Connections, sink: () => AdapterSink | undefined) {
  const running = () => {
    const now = sink();
    if (!now) throw new Error('the bridge is not running');
    return now;
  };
  const desk: OperatorDesk = {
    maxText: MAX_TEXT,
    async rooms() {
      const overview = (await running().overview?.())?.rooms ?? [];
      const known: McpRoom[] = overview.map((room) => ({
        room: room.key,
        platform: room.platform,
        kind: room.kind,
        postable: room.platform === WEB_PLATFORM && room.kind === 'room' && rooms.includes(room.channel),
        control: room.control.holder,
        working: room.working,
        queued: room.queued,
      }));
      const unseen = rooms
        .filter((room) => !known.some((k) => k.room === `${WEB_PLATFORM}:${room}`))
        .map(
          (room): McpRoom => ({
            room: `${WEB_PLATFORM}:${room}`,
            platform: WEB_PLATFORM,
            kind: 'room',
            postable: true,
          }),
        );
      return [...known, ...unseen].sort((a, b) => a.room.localeCompare(b.room));
    },
    async history(room, page) {
      return (await running().transcript?.(room, page)) ?? [];
    },
    async post(person: WebIdentity, room: string, text: string) {
      running();
      return connections.postFrom(person, room, text);
    },
    async command(person: WebIdentity, room: string, name: CommandName, args: string) {
      const at = room.indexOf(':');
      const answer = await running().command({
        platform: room.slice(0, at),
        channel: room.slice(at + 1),
        name,
        args: args.trim(),
        user: { id: `${WEB_PLATFORM}:${person.name.toLowerCase()}`, name: person.name },
        isOperator: person.operator,
        fromConsole: true,
      });
      return answer ?? '';
    },
  };
  return desk;
}

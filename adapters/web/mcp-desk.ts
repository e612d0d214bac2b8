/**
 * What the MCP endpoint's tools reach of the bridge, from the web room: the rooms (every room the bridge keeps; the
 * web rooms, and the terminal room of the same process, postable), a room's stored messages, a post as a person's
 * message (the page's own path; the terminal's for its room), and a command carried out as that person's in the
 * room, told to the room's humans as one from the console is.
 */
import type { McpRoom, OperatorDesk } from '../../src/mcp-serve/server.js';
import type { AdapterSink, CommandName } from '../../src/ports.js';
import type { WebIdentity } from '../../src/store/port.js';
import { type Connections, MAX_TEXT, WEB_PLATFORM } from './connections.js';

/** A room of another platform an operator may post into over MCP (the terminal room, beside the web room). */
export interface PostableRoom {
  /** `platform:channel`. */
  readonly key: string;
  post(person: WebIdentity, text: string): Promise<string>;
}

export function webDesk(
  rooms: readonly string[],
  connections: Connections,
  sink: () => AdapterSink | undefined,
  others: readonly PostableRoom[] = [],
): OperatorDesk {
  const webKeys = rooms.map((room) => `${WEB_PLATFORM}:${room}`);
  const postable = [...webKeys, ...others.map((other) => other.key)];
  const running = () => {
    const now = sink();
    if (!now) throw new Error('the bridge is not running');
    return now;
  };
  return {
    maxText: MAX_TEXT,
    async rooms() {
      const overview = (await running().overview?.())?.rooms ?? [];
      const known: McpRoom[] = overview.map((room) => ({
        room: room.key,
        platform: room.platform,
        kind: room.kind,
        postable: room.kind === 'room' && postable.includes(room.key),
        control: room.control.holder,
        working: room.working,
        queued: room.queued,
      }));
      const unseen = postable
        .filter((key) => !known.some((k) => k.room === key))
        .map((key): McpRoom => ({ room: key, platform: key.slice(0, key.indexOf(':')), kind: 'room', postable: true }));
      return [...known, ...unseen].sort((a, b) => a.room.localeCompare(b.room));
    },
    async history(room, page) {
      return (await running().transcript?.(room, page)) ?? [];
    },
    async post(person: WebIdentity, room: string, text: string) {
      running();
      const other = others.find((o) => o.key === room);
      if (other) return other.post(person, text);
      if (!webKeys.includes(room)) throw new Error(`${room} is not a room you can post into here`);
      return connections.postFrom(person, room.slice(WEB_PLATFORM.length + 1), text);
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
}

#!/usr/bin/env node
// A deliberately broken MCP stdio server, written by hand (raw newline-delimited JSON-RPC) so it can misbehave:
// a line that is no JSON, a call that never answers, a crash in the middle of a call, a 10 MB result, and tools whose
// names clash with a bridge tool (`bash`) and with each other once made plain (`x__y`, `x/_y`), and bad schemas.
// BROKEN_LOG: a file that gets one line per message received (what arrived on the wire). BROKEN_PROTOCOL: the
// protocol version it answers the handshake with (default: the client's).
import { appendFileSync } from 'node:fs';

const log = process.env.BROKEN_LOG;
const object = (properties = {}) => ({ type: 'object', properties });
const tools = [
  { name: 'echo', description: 'Echoes text', inputSchema: object({ text: { type: 'string' } }) },
  { name: 'hang', description: 'Never answers', inputSchema: object() },
  { name: 'crash', description: 'Exits in the middle of the call', inputSchema: object() },
  { name: 'big', description: 'Returns 10 MB of text', inputSchema: object() },
  { name: 'bad_json', description: 'Writes a line that is no JSON, then answers', inputSchema: object() },
  { name: 'bash', description: 'Named like a bridge tool', inputSchema: object({ command: { type: 'string' } }) },
  { name: 'x__y', description: 'Named with the separator', inputSchema: object() },
  { name: 'x/_y', description: 'The same name once made plain', inputSchema: object() },
  { name: 'string_schema', description: 'Not an object schema', inputSchema: { type: 'string' } },
  { name: 'any_of', description: 'A top-level anyOf', inputSchema: { type: 'object', anyOf: [object(), object()] } },
  { name: 'fails', description: 'Reports an error', inputSchema: object() },
];

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const reply = (id, result) => send({ jsonrpc: '2.0', id, result });
const text = (t) => ({ content: [{ type: 'text', text: t }] });

function call(id, name, args) {
  switch (name) {
    case 'echo':
      return reply(id, text(`echo: ${args?.text ?? ''}`));
    case 'hang':
      return;
    case 'crash':
      process.stdout.write('{"jsonrpc":"2.0","id":');
      return process.exit(3);
    case 'big':
      return reply(id, text('A'.repeat(10 * 1024 * 1024)));
    case 'bad_json':
      process.stdout.write('this is { not json\n');
      return reply(id, text('after the bad line'));
    case 'fails':
      return reply(id, { ...text('it went wrong'), isError: true });
    default:
      return reply(id, text(`called ${name}`));
  }
}

let buffer = '';
process.stdin.on('data', (chunk) => {
  buffer += chunk.toString('utf8');
  for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    if (!line.trim()) continue;
    if (log) appendFileSync(log, `${line}\n`);
    const message = JSON.parse(line);
    if (message.method === 'initialize') {
      reply(message.id, {
        protocolVersion: process.env.BROKEN_PROTOCOL ?? message.params.protocolVersion,
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: 'broken', version: '1.0.0' },
      });
    } else if (message.method === 'tools/list') {
      reply(message.id, { tools });
    } else if (message.method === 'tools/call') {
      call(message.id, message.params.name, message.params.arguments);
    } else if (message.id !== undefined && message.method) {
      send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'no such method' } });
    }
  }
});

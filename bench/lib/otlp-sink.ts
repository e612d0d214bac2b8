/**
 * A local OTLP/HTTP receiver for benchmarks, in a process of its own as a collector on the same machine would be: it
 * takes each export, reads it whole and answers 200 (it decodes nothing: the figure is the bridge's cost of tracing,
 * not a collector's, and its CPU is not the bridge process's).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';

const RECEIVER = `
const server = require('node:http').createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    process.send?.('export');
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{}');
  });
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
`;

export async function startOtlpSink(): Promise<{ url: string; exports(): number; close(): Promise<void> }> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let exports = 0;
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.on('message', (message: unknown) => {
      if (message === 'export') exports += 1;
      else if (message && typeof message === 'object' && 'port' in message) resolve(Number(message.port));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    exports: () => exports,
    close: async () => {
      child.kill();
      await once(child, 'exit');
    },
  };
}

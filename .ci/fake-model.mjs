// CI's stand-in for a model endpoint: answers GET /v1/models (all `--check` asks) and writes its
// port to the file named on the command line. Stops when its parent kills it.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';

const server = createServer((request, response) => {
  const models = request.method === 'GET' && request.url === '/v1/models';
  response.writeHead(models ? 200 : 404, { 'content-type': 'application/json' });
  response.end(JSON.stringify(models ? { object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] } : {}));
});
server.listen(0, '127.0.0.1', () => writeFileSync(process.argv[2], String(server.address().port)));

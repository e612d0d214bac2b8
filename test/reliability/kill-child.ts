/**
 * The bridge as its own process, for the kill test and the load bench: `npm start` without Docker (the agents
 * here run no commands). It prints `ready` once it runs, and stays up until it is killed or stopped by a signal.
 */
import { run } from '../../src/main.js';
import { UnavailableSandbox } from '../../src/tools/unavailable-sandbox.js';

const running = await run({
  argv: [],
  env: process.env,
  cwd: process.env.ROUNDTABLE_CWD ?? process.cwd(),
  sandbox: async () => new UnavailableSandbox('no sandbox in this test'),
});
process.stdout.write('ready\n');
// As `npm start` does: a signal stops the turns, the adapters and the store, then the process exits.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void running.shutdown().then(() => process.exit(0)));
}

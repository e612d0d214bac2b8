/**
 * The bridge as its own process, for the kill test: `npm start` without Docker (the agents here run no
 * commands). It prints `ready` once it runs, and stays up until it is killed.
 */
import { run } from '../../src/main.js';
import { UnavailableSandbox } from '../../src/tools/unavailable-sandbox.js';

await run({
  argv: [],
  env: process.env,
  cwd: process.env.ROUNDTABLE_CWD ?? process.cwd(),
  sandbox: async () => new UnavailableSandbox('no sandbox in this test'),
});
process.stdout.write('ready\n');

/**
 * `npm run bench`: runs every benchmark in bench/ one after another (each prints its own figures,
 * how they were obtained, and a ratio against a baseline measured in the same run).
 * `npm run bench -- core sandbox` runs only those.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const benches = readdirSync(dir)
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
  .map((file) => file.replace(/\.ts$/, ''))
  .filter((name) => wanted.length === 0 || wanted.includes(name))
  .sort();
let failed = 0;
for (const name of benches) {
  console.log(`\n=== bench/${name}.ts ===`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, `${name}.ts`)], { stdio: 'inherit' });
  if (result.status !== 0) {
    failed++;
    console.log(`bench/${name}.ts exited with ${result.status ?? result.signal}`);
  }
}
process.exit(failed > 0 ? 1 : 0);

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { frontMatterSchema } from '../src/config/agent-file.js';
import { SETTING_NAMES } from '../src/config/index.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

describe('documentation stays in step with the code', () => {
  it('.env.example documents every variable the bridge reads', () => {
    const example = read('.env.example');
    expect(SETTING_NAMES.filter((name) => !new RegExp(`^${name}=`, 'm').test(example))).toEqual([]);
  });

  it('docs/configuration.md names every variable and every agent file key', () => {
    const page = read('docs/configuration.md');
    expect(SETTING_NAMES.filter((name) => !page.includes(`\`${name}\``))).toEqual([]);
    const keys = Object.keys(frontMatterSchema.shape);
    expect(keys.filter((key) => !page.includes(`\`${key}\``))).toEqual([]);
  });

  it('README shows the two set-up commands', () => {
    const readme = read('README.md');
    expect(readme).toContain('npm start');
    expect(readme).toContain('npm test');
  });
});

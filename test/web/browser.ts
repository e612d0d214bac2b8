/**
 * The browser tests' Chromium: Debian's `chromium` driven by playwright-core. Outside CI a missing browser (or
 * playwright-core) skips those tests with one line saying so; with CI set they run and fail naming what is missing.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser } from 'playwright-core';
import { isCi } from '../sandbox/docker-setup.js';

/** Where Debian installs it (`apt-get install chromium`); CHROMIUM_PATH names another. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface BrowserPlan {
  readonly run: boolean;
  /** Why they cannot run here (said in one line when skipped; the failure when required). */
  readonly missing?: string;
}

export function browserPlan(): BrowserPlan {
  let missing: string | undefined;
  if (!existsSync(CHROMIUM)) missing = `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
  else {
    try {
      createRequire(import.meta.url).resolve('playwright-core');
    } catch {
      missing = 'playwright-core is not installed (npm ci)';
    }
  }
  if (!missing) return { run: true };
  if (isCi(process.env.CI)) return { run: true, missing };
  console.log(`Browser tests skipped: ${missing} (CI=true makes them required)`);
  return { run: false, missing };
}

/** Chromium as root in a container needs --no-sandbox; it must not call home either. */
export async function launchChromium(plan: BrowserPlan): Promise<Browser> {
  if (plan.missing) throw new Error(`CI is set, so the browser tests must run, but ${plan.missing}`);
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
}

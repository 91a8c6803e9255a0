import { readFileSync } from 'node:fs';

/** The package version, reported as softwareVersion. */
export const SOFTWARE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

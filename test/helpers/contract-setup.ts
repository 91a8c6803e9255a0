/** Per test file: writes this file's contract tally where the global teardown adds them up. */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, inject } from 'vitest';
import { resetTally, tally } from './contract.js';

afterAll(() => {
  if (tally.operation + tally.problemComponent + tally.notDescribed === 0) return;
  writeFileSync(path.join(inject('contractTallyDir'), `${process.pid}-${randomUUID()}.json`), JSON.stringify(tally));
  resetTally();
});

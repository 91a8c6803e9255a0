/**
 * Vitest global setup: gives the run its own folder for contract tallies (several people and CI
 * may run the suite in one checkout at once) and, after the run, prints how many responses the
 * suite checked against /openapi.json and writes test-artifacts/contract-summary.json.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import type { ContractTally } from './contract.js';

declare module 'vitest' {
  export interface ProvidedContext {
    contractTallyDir: string;
  }
}

const ARTIFACTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-artifacts');
let tallyDir: string | undefined;

export function setup(project: TestProject): void {
  mkdirSync(ARTIFACTS, { recursive: true });
  tallyDir = mkdtempSync(path.join(ARTIFACTS, 'contract-tally-'));
  project.provide('contractTallyDir', tallyDir);
}

export function teardown(): void {
  if (!tallyDir) return;
  const total: ContractTally = { operation: 0, problemComponent: 0, notDescribed: 0, byKind: {} };
  for (const name of readdirSync(tallyDir).filter((file) => file.endsWith('.json'))) {
    const part = JSON.parse(readFileSync(path.join(tallyDir, name), 'utf8')) as ContractTally;
    total.operation += part.operation;
    total.problemComponent += part.problemComponent;
    total.notDescribed += part.notDescribed;
    for (const [kind, n] of Object.entries(part.byKind)) total.byKind[kind] = (total.byKind[kind] ?? 0) + n;
  }
  rmSync(tallyDir, { recursive: true, force: true });
  total.byKind = Object.fromEntries(Object.entries(total.byKind).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(path.join(ARTIFACTS, 'contract-summary.json'), `${JSON.stringify(total, null, 2)}\n`);
  const validated = total.operation + total.problemComponent;
  console.log(
    `\nContract: ${validated} responses validated against /openapi.json ` +
      `(${total.operation} against their operation's declared response, ${total.problemComponent} problem bodies on undocumented paths against components.schemas.Problem); ` +
      `${total.notDescribed} responses the document does not describe (operational routes, /docs, discovery, CORS preflight), not validated. ` +
      'Breakdown: test-artifacts/contract-summary.json',
  );
}

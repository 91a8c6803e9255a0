/**
 * Vitest global setup: one folder per run (and project) for the test files' temporary folders
 * (makeTempDir), removed after the run, so a file need not remove its own. Left in the machine's
 * temp folder, they came to ~10 MB a run, and repeated runs piled them up.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    testTempRoot: string;
  }
}

/** Each project's folder, and its removal as the setup's teardown (so two projects sharing this module keep theirs apart). */
export function setup(project: TestProject): () => void {
  const root = mkdtempSync(path.join(tmpdir(), 'guides-test-run-'));
  // Others may pass through it, not list it: some tests run a server as another user (nobody,
  // postgres) on a folder of their own inside.
  chmodSync(root, 0o711);
  project.provide('testTempRoot', root);
  return () => rmSync(root, { recursive: true, force: true });
}

/**
 * Vitest global setup: one folder per run (and project) for the test files' temporary folders
 * (makeTempDir), removed after the run. Test files leave their databases and corpora there rather
 * than each cleaning up after itself: ~10 MB a run, which repeated runs used to pile up in the
 * machine's temp folder.
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

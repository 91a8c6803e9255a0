/** The shipped sample content, parsed once per test file. */
import { SAMPLE_CONTENT_DIR } from '../../src/config.js';
import { loadContentFolder } from '../../src/content/load-content.js';
import type { ContentSet } from '../../src/guides/guide.js';

let sample: Promise<ContentSet> | undefined;

export function loadSampleContent(): Promise<ContentSet> {
  sample ??= loadContentFolder(SAMPLE_CONTENT_DIR).then((loaded) => {
    if (!loaded.content) throw new Error(`sample content has problems: ${JSON.stringify(loaded.problems)}`);
    return loaded.content;
  });
  return sample;
}

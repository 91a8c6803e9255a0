/**
 * Unpublished guides that carry unique marker words in slug, title, summary, tags and body, and
 * share common words with published guides so that a leaky filter would surface them. No response
 * and no store read may ever contain a marker word.
 */
import type { ContentSet, GuideRecord } from '../../src/guides/guide.js';
import { makeContent, makeGuide } from './guide-factory.js';
import { loadSampleContent } from './sample-content.js';

export const MARKERS = ['zqxhidden', 'vexillumsecret', 'plumbagoarchive', 'quixotrydraft'] as const;

export function markerGuides(): GuideRecord[] {
  return [
    makeGuide({
      slug: 'zqxhidden-kitchen-menu',
      status: 'retained',
      publishedAt: '2099-01-01T00:00:00Z',
      title: 'Zqxhidden kitchen menu for staff',
      summary: 'Zqxhidden: food safety, allergens and the kitchen menu.',
      tags: ['zqxhidden', 'kitchen'],
      markdown: '# Zqxhidden kitchen\n\nKitchen menu food safety staff allergen waste cafe zqxhidden vexillumsecret.\n',
    }),
    makeGuide({
      slug: 'plumbagoarchive-food-waste',
      status: 'archived',
      publishedAt: '2099-01-02T00:00:00Z',
      title: 'Plumbagoarchive food waste',
      summary: 'Old plumbagoarchive notes on food waste and the menu.',
      tags: ['plumbagoarchive'],
      markdown: '# Plumbagoarchive\n\nFood waste menu kitchen staff plumbagoarchive.\n',
    }),
    makeGuide({
      slug: 'reduce-food-waste-quixotrydraft',
      status: 'retained',
      publishedAt: null,
      title: 'Quixotrydraft reduce food waste',
      summary: 'A quixotrydraft about waste.',
      markdown: '# Quixotrydraft\n\nReduce food waste in the kitchen, quixotrydraft.\n',
    }),
  ];
}

/** The sample content plus the marker guides. */
export async function sampleWithMarkers(): Promise<ContentSet> {
  const sample = await loadSampleContent();
  return makeContent([...sample.guides, ...markerGuides()], { product: sample.product, resources: sample.resources });
}

/** The first marker word found in `text` (case-insensitive), if any. */
export function markerIn(text: string): string | undefined {
  const lower = text.toLowerCase();
  return MARKERS.find((marker) => lower.includes(marker));
}

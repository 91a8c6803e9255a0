/**
 * The benchmark's words: English function words, real cooking and restaurant words, and 60,000
 * pronounceable pseudo-words, ranked for a Zipf-like frequency (s ≈ 1), all from a seeded PRNG so
 * that every machine builds the same list.
 */

/** mulberry32: small, fast, good enough for text generation, and identical on every platform. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const DEFAULT_SEED = 20_260_101;

const words = (text: string): string[] => text.split(/\s+/).filter((word, index, all) => word !== '' && all.indexOf(word) === index);

export const FUNCTION_WORDS = words(`the of and to a in is for that it on with as be are this by at or from have not you your
an can was but they their will more each one all when if which should what so there than about any into
also only out up them before after most some other use how these may every time been has were its where
must because first two then over new while those such make keep both just much through used very
many same well day per three week between under still without during good need within back right often`);

/** Restaurant vocabulary by topic; the first words of a topic are its strongest signals. */
export const TOPICS: Record<string, string[]> = {
  'food-safety': words('temperature thermometer bacteria pathogen contamination sanitize hygiene danger zone cooling reheating probe log'),
  allergens: words('allergen allergy peanut gluten shellfish label matrix cross-contact celiac sesame dairy egg'),
  'menu-engineering': words('menu dish margin popularity contribution star plowhorse puzzle dog placement description price'),
  costing: words('cost recipe yield portion plate ingredient invoice percentage budget variance spreadsheet'),
  inventory: words('inventory stock count par shelf storage rotation fifo walk-in freezer cooler order'),
  staffing: words('staff schedule shift labor hiring training onboarding turnover server cook manager payroll'),
  service: words('guest table reservation host seating turn complaint tip service waiter check experience'),
  kitchen: words('kitchen station line prep mise knife grill fryer oven burner equipment hood'),
  beverage: words('bar wine beer cocktail spirit pour glassware coffee espresso barista keg liquor'),
  marketing: words('marketing social review loyalty promotion brand newsletter campaign photo website community event'),
  sustainability: words('waste compost recycling energy water packaging sourcing local seasonal farm supplier donation'),
  cleaning: words('cleaning sanitizer chemical dishwasher floor drain grease trap pest rodent schedule checklist'),
  finance: words('revenue profit loss cash sales forecast rent lease insurance tax accountant prime'),
  baking: words('bread dough pastry flour butter oven proof croissant cake sugar yeast laminate'),
  purchasing: words('supplier vendor delivery receiving negotiation contract produce meat seafood quote catalog case'),
};

/** Restaurant words nearly every guide uses. */
export const GENERAL_TERMS = words('food restaurant kitchen staff guest menu service team cost order');

/** More real words of kitchens and dining rooms, spread over the middle ranks. */
export const COOKING_WORDS = words(`braise roast simmer poach blanch sear saute steam broil smoke cure brine marinate ferment pickle
whisk fold knead chop dice mince julienne grate zest peel trim fillet debone carve slice baste glaze reduce deglaze emulsify
stock broth sauce gravy roux vinaigrette dressing marinade puree custard batter crust crumb garnish seasoning spice herb salt
pepper garlic onion shallot leek carrot celery potato tomato lettuce spinach kale cabbage mushroom pepperoni basil thyme rosemary
parsley cilantro oregano cumin paprika cinnamon nutmeg vanilla lemon lime orange apple pear berry cherry peach plum grape melon
chicken beef pork lamb veal duck turkey salmon tuna cod shrimp oyster mussel clam crab lobster scallop anchovy sardine bacon ham
sausage cheese cream milk yogurt rice pasta noodle grain bean lentil chickpea oat barley corn wheat rye tofu nut almond walnut
pistachio honey syrup vinegar oil olive mustard ketchup mayonnaise soup stew salad sandwich burger pizza taco curry risotto
dumpling omelette pancake waffle tart pie cookie muffin scone biscuit brioche baguette sourdough focaccia bagel doughnut
skillet saucepan stockpot wok griddle salamander mandoline blender mixer processor ladle tongs spatula colander sieve whisk
cutting board apron towel glove hairnet thermometer timer scale container lid wrap foil tray rack cart pan sheet hotel
breakfast brunch lunch dinner supper appetizer starter entree main side dessert snack buffet banquet catering takeout
delivery drive-through counter patio terrace dining room lounge booth banquette chef sous commis expeditor dishwasher busser
runner bartender sommelier hostess cashier owner operator franchise bistro brasserie diner cafe trattoria tavern pub canteen
allergen vegetarian vegan halal kosher organic gluten-free sustainable wholesale retail invoice receipt ticket tab gratuity
forecast audit inspection permit license certificate complaint feedback rating review survey`);

/** Words with accents and typographic apostrophes, as real guides have (crème brûlée, café). */
export const ACCENTED_WORDS = words(
  'café crème brûlée purée jalapeño sauté flambé entrée soufflé consommé açaí rosé naïve piña jamón pâté garçon déjà façade',
);

const ONSETS = [
  'b',
  'c',
  'd',
  'f',
  'g',
  'h',
  'j',
  'k',
  'l',
  'm',
  'n',
  'p',
  'r',
  's',
  't',
  'v',
  'w',
  'z',
  'br',
  'cl',
  'dr',
  'fr',
  'gr',
  'pl',
  'pr',
  'sh',
  'st',
  'tr',
  'ch',
  'th',
  'sp',
  'bl',
  'qu',
  'sl',
];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'ou', 'ie', 'oa', 'ee', 'y'];
const CODAS = ['', '', '', 'n', 'r', 'l', 's', 't', 'm', 'nd', 'st', 'rt', 'ck', 'ng', 'sh', 'x'];
const SUFFIXES = ['s', 'ing', 'ed', 'er', 'ment', 'ness', 'ly', 'ion', 'able'];

export interface Vocabulary {
  /** Words by Zipf rank (index 0 is the most frequent). */
  words: string[];
  /** Cumulative probabilities, same order. */
  cdf: Float64Array;
}

/** The ranked vocabulary and its Zipf CDF; the same for every corpus size. */
export function buildVocabulary(seed = DEFAULT_SEED, pseudoWordCount = 60_000): Vocabulary {
  const random = createRandom(seed ^ 0x5eed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const topicTerms = [...new Set([...GENERAL_TERMS, ...Object.values(TOPICS).flat()])];
  const real = [...new Set([...topicTerms, ...COOKING_WORDS, ...ACCENTED_WORDS])].filter((word) => !GENERAL_TERMS.includes(word));
  const taken = new Set<string>([...FUNCTION_WORDS, ...GENERAL_TERMS, ...real]);
  const pseudo: string[] = [];
  while (pseudo.length < pseudoWordCount) {
    const syllables = 1 + Math.floor(random() * 2.6);
    let word = '';
    for (let i = 0; i < syllables; i += 1) word += pick(ONSETS) + pick(VOWELS) + (i === syllables - 1 ? pick(CODAS) : '');
    if (word.length < 3 || taken.has(word)) continue;
    taken.add(word);
    pseudo.push(word);
    // Morphological variants share a stem with their base word, as real vocabularies do (prefix searches find both).
    const variant = word + pick(SUFFIXES);
    if (random() < 0.25 && !taken.has(variant)) {
      taken.add(variant);
      pseudo.push(variant);
    }
  }
  // Ranks: function words with the general restaurant words among them (they match most guides, as
  // "food" does in a real corpus of restaurant guides), then the real words spread over ranks up to
  // ~4,000 among the first generated words, then the long tail of generated words.
  const ranked: string[] = [...FUNCTION_WORDS];
  GENERAL_TERMS.forEach((term, index) => ranked.splice(6 + index * 5, 0, term));
  const placed = new Map<number, string>();
  real.forEach((term, index) => {
    let rank = Math.floor(ranked.length + 5 + (index / real.length) ** 2 * 4000 + random() * 40);
    while (placed.has(rank)) rank += 1;
    placed.set(rank, term);
  });
  const lastPlaced = Math.max(...placed.keys());
  let next = 0;
  for (let rank = ranked.length; next < pseudo.length || rank <= lastPlaced; rank += 1) {
    const term = placed.get(rank);
    if (term !== undefined) ranked.push(term);
    else if (next < pseudo.length) ranked.push(pseudo[next++] as string);
  }
  const cdf = new Float64Array(ranked.length);
  let total = 0;
  for (let i = 0; i < ranked.length; i += 1) {
    total += 1 / (i + 1) ** 1.02;
    cdf[i] = total;
  }
  for (let i = 0; i < cdf.length; i += 1) cdf[i] = (cdf[i] as number) / total;
  return { words: ranked, cdf };
}

/** A word drawn with its Zipf probability. */
export function zipfWord(vocabulary: Vocabulary, random: () => number): string {
  const u = random();
  const { cdf } = vocabulary;
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((cdf[mid] as number) < u) lo = mid + 1;
    else hi = mid;
  }
  return vocabulary.words[lo] as string;
}

/**
 * The corpus the judged queries run on: the sample guides, and a few guides of one shape the
 * sample lacks. In each group one guide's title holds every word of a query and its body is long
 * (a reference guide with a register of dishes, wines or sites); the others are short and each has
 * one of the query's words in its title and the other in its body. A ranking that lets the long
 * body cost the better title match puts the short ones first (docs/search.md, "Ranking").
 */
import type { ContentSet, GuideRecord } from '../../src/guides/guide.js';
import { makeGuide } from '../helpers/guide-factory.js';
import { loadSampleContent } from '../helpers/sample-content.js';

const DISHES = [
  'braised lamb shoulder',
  'smoked trout rillettes',
  'roast cauliflower steak',
  'pork belly bao',
  'crab linguine',
  'chicken katsu curry',
  'beetroot and goat curd salad',
  'fish pie',
  'mushroom risotto',
  'steak frites',
  'sticky toffee pudding',
  'lemon tart',
  'miso aubergine',
  'duck leg confit',
  'gnocchi with sage butter',
  'seafood chowder',
  'falafel wrap',
  'beef shin ragù',
  'pad thai',
  'chocolate fondant',
  'halloumi skewers',
  'mussels in cider',
  'pea and mint soup',
  'venison pie',
  'tuna tartare',
  'bread and butter pudding',
  'carrot cake',
  'onion bhaji',
  'lobster roll',
  'panna cotta',
];
const INGREDIENTS = [
  'celery',
  'mustard',
  'sesame',
  'milk',
  'egg',
  'wheat flour',
  'soya',
  'peanut',
  'walnut',
  'sulphites',
  'crustacean stock',
  'lupin',
];
const WINES = [
  'Picpoul de Pinet',
  'Rioja Crianza',
  'Sancerre',
  'Malbec from Mendoza',
  'Grüner Veltliner',
  'Chianti Classico',
  'Albariño',
  'Côtes du Rhône',
  'Marlborough Sauvignon Blanc',
  'Barolo',
  'Muscadet',
  'Beaujolais Villages',
  'Vinho Verde',
  'Primitivo',
  'Chablis',
  'Douro red',
  'Prosecco',
  'Crémant de Loire',
  'Fiano',
  'Pinot Noir from Otago',
  'Tempranillo rosado',
  'Riesling Kabinett',
  'Nero d’Avola',
  'Viognier',
  'Cava',
];
const SITES = [
  'main kitchen',
  'pastry section',
  'dish pit',
  'prep room',
  'bar back',
  'basement store',
  'bakery annex',
  'staff canteen',
  'banqueting kitchen',
  'pizza station',
  'grill line',
  'cold larder',
  'butchery',
  'fish room',
  'rooftop bar',
  'terrace kitchen',
  'room service pantry',
  'café counter',
  'central production unit',
  'food truck',
  'pop-up kitchen',
  'events marquee',
  'school kitchen',
  'hospital tray line',
  'airport unit',
];

/** A register: one paragraph per entry, the way reference guides list every dish, wine or site. */
function register(entries: readonly string[], line: (entry: string, i: number) => string): string {
  return entries.map((entry, i) => line(entry, i)).join('\n\n');
}

const ingredient = (i: number): string => INGREDIENTS[i % INGREDIENTS.length] as string;

const allergenMenuLabelling = `# Allergen menu labelling

Every dish on the printed menu, the specials board and the delivery apps needs the same allergen
information, written the same way. This guide sets out a labelling system that survives recipe
changes, supplier swaps and a new head chef.

## Build the register first

Labels are only as good as the recipe register behind them. Keep one sheet per dish with every
component, sub-recipe and bought-in product, and record which of the fourteen allergens each contains.
When a supplier changes a product, the register changes the same day and the menu follows.

## Choose a labelling style

Numbered codes at the end of each dish keep the menu readable; a full matrix at the back of the menu
or on a QR code gives the detail. Whatever you choose, use it on every channel.

## The dish-by-dish register

${register(DISHES, (dish, i) => `**${dish[0]?.toUpperCase()}${dish.slice(1)}.** Contains ${ingredient(i)} and ${ingredient(i + 5)}${i % 3 === 0 ? `, and may contain traces of ${ingredient(i + 7)} from the shared fryer` : ''}. The sauce, the garnish and any bought-in bread are listed as separate components, because each is changed on its own schedule. When the recipe changes, the card is reprinted, the change is noted in the log with the date and the chef's initials, and the front-of-house team is told at the next pre-shift meeting, before the dish is sold again.`)}

## Check and sign off

Once a month, pick five dishes at random, compare the plate with the register and the printed label,
and record what you found. Differences are fixed before the next service.
`;

const menuEngineering = `# Menu engineering

Menu engineering sorts dishes by popularity and contribution margin, then uses layout to sell more
of the profitable ones. Start with three months of sales by item and a current plate cost for each.

Place stars where the eye lands first, rework plowhorses, and drop dogs. Keep descriptions short.
Any dish you move or rewrite still carries its allergen code, and a reworked recipe goes back through
the allergen check before the new menu is printed.
`;

const allergenTraining = `# Allergen training

Every member of staff who takes an order, cooks or carries a plate needs allergen training before
their first shift, and a refresher each year.

Cover the fourteen allergens, cross-contact, how to answer a guest's question honestly, and who
to ask when unsure. New starters walk the line with a supervisor, read the menu with its codes, and
learn where the recipe register is kept.
`;

const wineListPricing = `# Wine list pricing

A wine list earns its keep when every bottle is priced on purpose. This guide sets a pricing method
for a list of any size: cost, cash margin, and how the price steps guide a guest along the list.

## Cost every bottle the same way

Use the delivered cost per bottle, including duty and delivery, and recalculate when the supplier's
price changes. Glass pours are costed from the bottle with an allowance for wastage.

## The bottle-by-bottle notes

${register(WINES, (wine, i) => `**${wine}.** Bought at a delivered cost in band ${(i % 5) + 1}, it sits ${i % 2 === 0 ? 'near the entry point of its section' : 'in the middle of its section'} and is sold by the bottle${i % 3 === 0 ? ' and by the glass' : ''}. The markup follows the section's cash-margin rule rather than a flat multiple, so the guest sees even steps between neighbouring bottles. Its tasting note, vintage and producer are checked against each delivery, and the note on the printed copy changes with the vintage.`)}

## Review the list each quarter

Compare sales by bottle with the price steps. Slow sellers at the top of a section are repriced or
replaced; fast sellers at the bottom may carry a little more margin.
`;

const wineService = `# Wine service

Present the bottle to the host, open it at the table, pour a taste, then serve the guests clockwise
with the host last. Keep white and sparkling wine in a bucket and red at room temperature.

Staff should know the story of each wine and its pricing by the glass, so that they can suggest
a bottle at a similar price when the first choice has run out.
`;

const pricingStrategy = `# Pricing strategy

Set prices from cost, competition and what guests value. Review them twice a year, and after any
large change in supplier costs.

Round figures read as generous and precise figures as calculated; keep price steps even within a
section. Drinks follow the same rules, from cocktails to the wine list.
`;

const greaseTrapSchedule = `# Grease trap maintenance schedule

A grease trap that is emptied on time never floods the kitchen or the street. This guide sets out a
schedule for every trap and interceptor a business runs, the checks between pump-outs, and the
records an inspector asks for.

## Size the interval

The interval depends on the trap's capacity and how much fat the kitchen sends down the drain. Start
with the contractor's recommendation and adjust after measuring how full the trap is at each visit.

## The site-by-site schedule

${register(SITES, (site, i) => `**${site[0]?.toUpperCase()}${site.slice(1)}.** Its trap is pumped out every ${(i % 4) + 1} weeks by the contractor, and checked weekly by the closing supervisor, who lifts the lid, measures the fat layer and writes the depth in the log. Baskets and strainers over the sinks are emptied after every service${i % 2 === 0 ? ', and the dishwasher filter is cleaned each night' : ''}. Any smell, slow drain or overflow is reported the same day, and the visit is brought forward.`)}

## Keep the records

File every waste transfer note with the date, the volume removed and the contractor's licence
number. Inspectors and water companies ask for two years of them.
`;

const greaseFires = `# Grease fires

Never use water on burning fat. Turn off the heat, cover the pan with a lid or fire blanket, and use
a wet-chemical extinguisher on fryer fires.

Fires start where fat has built up: canopy filters, ducts and the wall behind the range. Filters go
through the dishwasher weekly, and duct maintenance is booked with a specialist.
`;

const maintenanceContracts = `# Maintenance contracts

A good maintenance contract names the equipment covered, the response time, the parts included and
the price of call-outs. Read it before signing, and keep a copy with the asset register.

Bundle the small contracts, such as refrigeration, extraction, dishwashers and grease collection,
with one or two firms, so that someone answers the phone on a Saturday night.
`;

const extra = (slug: string, title: string, summary: string, tags: string[], markdown: string, day: number): GuideRecord =>
  makeGuide({ slug, title, summary, tags, markdown, publishedAt: `2026-02-${String(day).padStart(2, '0')}T09:00:00Z` });

/** The guides the judged queries of test/fixtures/judged-queries-fields.json need. */
export const FIELD_GUIDES: readonly GuideRecord[] = [
  extra(
    'allergen-menu-labelling',
    'Allergen menu labelling',
    'A labelling system for every dish on every channel, and the register behind it.',
    ['food-safety'],
    allergenMenuLabelling,
    2,
  ),
  extra(
    'menu-engineering',
    'Menu engineering',
    'Sort dishes by popularity and margin, then design the page to sell the profitable ones.',
    ['menu'],
    menuEngineering,
    10,
  ),
  extra(
    'allergen-training',
    'Allergen training',
    'What every member of staff must know before the first shift, and each year after.',
    ['training'],
    allergenTraining,
    11,
  ),
  extra(
    'wine-list-pricing',
    'Wine list pricing',
    'Cost every bottle the same way and set even price steps through each section.',
    ['beverage'],
    wineListPricing,
    3,
  ),
  extra('wine-service', 'Wine service', 'Present, open and pour at the table, and know each bottle.', ['service'], wineService, 12),
  extra(
    'pricing-strategy',
    'Pricing strategy',
    'Set prices from cost, competition and value, and review them twice a year.',
    ['finance'],
    pricingStrategy,
    13,
  ),
  extra(
    'grease-trap-maintenance-schedule',
    'Grease trap maintenance schedule',
    'Pump-out intervals, weekly checks and the records an inspector asks for.',
    ['compliance'],
    greaseTrapSchedule,
    4,
  ),
  extra(
    'grease-fires',
    'Grease fires',
    'Put out burning fat safely and stop fat building up where fires start.',
    ['safety'],
    greaseFires,
    14,
  ),
  extra(
    'maintenance-contracts',
    'Maintenance contracts',
    'What a good contract covers, and how to keep few of them.',
    ['equipment'],
    maintenanceContracts,
    15,
  ),
];

/** The sample guides and FIELD_GUIDES. */
export async function relevanceContent(): Promise<ContentSet> {
  const sample = await loadSampleContent();
  return { ...sample, guides: [...sample.guides, ...FIELD_GUIDES] };
}

// The arrows of docs/architecture.md ("The arrows and their rule"), checked by `npm run lint`
// (depcruise src). Type-only imports count as imports, except where a rule says otherwise.
const FASTIFY = '^node_modules/(fastify|fastify-plugin|@fastify/[^/]+)/';
/** The layers below the entry points at the src root. */
const LAYERS = '^src/(guides|lib|schemas|representation|store|content|http|mcp)/';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'guides-import-nothing-of-ours',
      comment: 'guides/ is the pure domain: it imports nothing of ours.',
      severity: 'error',
      from: { path: '^src/guides/' },
      to: { path: '^src/', pathNot: '^src/guides/' },
    },
    {
      name: 'lib-imports-nothing-of-ours',
      comment: 'lib/ holds small neutral helpers that any layer may use: they import nothing of ours.',
      severity: 'error',
      from: { path: '^src/lib/' },
      to: { path: '^src/', pathNot: '^src/lib/' },
    },
    {
      name: 'schemas-below-http',
      comment: 'schemas/ is pure TypeBox, used by http/, mcp/ and representation/: it imports only guides/ and lib/.',
      severity: 'error',
      from: { path: '^src/schemas/' },
      to: { path: '^src/', pathNot: '^src/(schemas|guides|lib)/' },
    },
    {
      name: 'representation-below-http',
      comment: 'representation/ makes response bytes for the event loop and the search workers: no http/, no store/.',
      severity: 'error',
      from: { path: '^src/representation/' },
      to: { path: '^src/', pathNot: '^src/(representation|schemas|guides|lib)/' },
    },
    {
      name: 'no-fastify-below-http',
      comment: 'representation/, schemas/, store/, guides/ and lib/ load in worker threads and tools: never Fastify.',
      severity: 'error',
      from: { path: '^src/(representation|schemas|store|guides|lib)/' },
      to: { path: FASTIFY },
    },
    {
      name: 'store-speaks-storage',
      comment: 'store/ imports store/, guides/, lib/ and representation/ (the search worker makes page bytes where it searches).',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/', pathNot: '^src/(store|guides|representation|lib)/' },
    },
    {
      name: 'backends-behind-open-store',
      comment: 'Callers use store/guide-store.ts and store/open-store.ts; only open-store.ts picks a backend.',
      severity: 'error',
      from: { pathNot: '^src/store/(sqlite|postgres)/|^src/store/open-store[.]ts$' },
      to: { path: '^src/store/(sqlite|postgres)/' },
    },
    {
      name: 'backends-apart',
      comment: 'The SQLite and PostgreSQL backends share only what store/ offers both.',
      severity: 'error',
      from: { path: '^src/store/(sqlite|postgres)/' },
      to: { path: '^src/store/(sqlite|postgres)/', pathNot: '^src/store/$1/' },
    },
    {
      name: 'search-worker-never-reaches-http',
      comment: 'The SQLite search worker thread loads storage and representation code only, never http/ or Fastify.',
      severity: 'error',
      from: { path: '^src/store/sqlite/search/sqlite-search-worker[.]ts$' },
      to: { path: `^src/http/|${FASTIFY}`, reachable: true },
    },
    {
      name: 'http-and-mcp-use-the-store-contract',
      comment: 'http/ and mcp/ reach the store through its contract (store/guide-store.ts) only.',
      severity: 'error',
      from: { path: '^src/(http|mcp)/' },
      to: { path: '^src/store/', pathNot: '^src/store/guide-store[.]ts$' },
    },
    {
      name: 'mcp-beside-http',
      comment: "mcp/ reuses http/'s route context and Markdown rendering, never its plugins, routes or caches.",
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: { path: '^src/http/', pathNot: '^src/http/(app-types|guide-markdown)[.]ts$' },
    },
    {
      name: 'content-through-the-store-interface',
      comment:
        "content/ imports guides/, lib/ and the store's interface (the contract, the import planner, guide preparation); it never writes SQL.",
      severity: 'error',
      from: { path: '^src/content/' },
      to: { path: '^src/', pathNot: '^src/(content|guides|lib)/|^src/store/(guide-store|import-plan|prepare-guide)[.]ts$' },
    },
    {
      name: 'layers-never-import-entry-points',
      comment: 'Arrows point down: nothing below the entry points at the src root imports them.',
      severity: 'error',
      from: { path: LAYERS },
      to: { path: '^src/[^/]+$', pathNot: '^src/config[.]ts$' },
    },
    {
      name: 'config-is-read-as-a-type',
      comment: 'Below the entry points, the configuration (src/config.ts) is a type that buildApp hands down.',
      severity: 'error',
      from: { path: LAYERS },
      to: { path: '^src/config[.]ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'resolvable',
      comment: 'Every import resolves: a rule above cannot see through one that does not.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Node's own conditions, so that packages exporting ESM only (typebox) resolve as Node loads them.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      mainFields: ['module', 'main', 'types'],
    },
  },
};

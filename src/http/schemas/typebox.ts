/**
 * TypeBox's builders, for every schema module (types are imported from 'typebox' directly: they
 * cost nothing at run time). `npm run build` bundles this one module with typebox into a single
 * file: typebox is 373 ES modules, and loading them one by one was a quarter of the service's
 * start-up (~260 ms of ~1.1 s on a 100k database, measured 2026-11-26 on Node 20).
 */
export { Type } from 'typebox';

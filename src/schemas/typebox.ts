/**
 * TypeBox's builders, for every schema module (types are imported from 'typebox' directly: they
 * cost nothing at run time). `npm run build` bundles this one module with typebox into a single
 * file: typebox is hundreds of ES modules, and loading them one by one was a quarter of the
 * service's start-up (docs/performance.md).
 */
export { Type } from 'typebox';

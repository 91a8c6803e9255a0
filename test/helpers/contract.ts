/**
 * Contract checking: every response a test sees is checked against what /openapi.json declares
 * for its path and status (Ajv, JSON Schema 2020-12, formats on). A status the operation does not
 * declare, a media type it does not declare, a body the schema refuses (including a field the
 * document does not declare) or a declared header with a value outside its schema is a
 * ContractViolation. buildTestApp wraps app.inject with this, so no test has to remember it.
 *
 * Tallies are per test file; test/helpers/contract-setup.ts writes them out after each file and
 * test/helpers/contract-global-setup.ts prints the total for the run.
 */
import { createHash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its default import is the module object in types only.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export class ContractViolation extends Error {
  override readonly name = 'ContractViolation';
}

/** How responses were checked in this test file. */
export interface ContractTally {
  /** Checked against the operation's declared response (status, media type, body schema, headers). */
  operation: number;
  /** Problem bodies on paths the document does not describe, checked against components.schemas.Problem. */
  problemComponent: number;
  /** Responses the document does not describe (operational routes, /docs assets, CORS preflight): not checked. */
  notDescribed: number;
  /** Per "METHOD template status" (or "METHOD (undocumented) status"), for the report. */
  byKind: Record<string, number>;
}

export const tally: ContractTally = { operation: 0, problemComponent: 0, notDescribed: 0, byKind: {} };

export function resetTally(): void {
  tally.operation = 0;
  tally.problemComponent = 0;
  tally.notDescribed = 0;
  tally.byKind = {};
}

export type CheckKind = keyof Omit<ContractTally, 'byKind'>;

/** How one response was checked, and the tally key it counts under. */
export interface CheckResult {
  kind: CheckKind;
  key: string;
}

function count({ kind, key }: CheckResult): void {
  tally[kind] += 1;
  tally.byKind[key] = (tally.byKind[key] ?? 0) + 1;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface JsonObject {
  [key: string]: Json;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, JsonObject>>;
  components?: { schemas?: Record<string, JsonObject> };
}

export interface ObservedResponse {
  method: string;
  /** Path and query as requested. */
  url: string;
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** The body as sent on the wire (possibly compressed). */
  rawBody: Buffer;
}

/** `#/components/schemas/X` → `#/$defs/X`, so a response schema compiles on its own with the components beside it. */
function rewriteRefs(value: Json): Json {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = key === '$ref' && typeof inner === 'string' ? inner.replace('#/components/schemas/', '#/$defs/') : rewriteRefs(inner);
  }
  return out;
}

interface CompiledDocument {
  document: OpenApiDocument;
  templates: Array<{ template: string; pattern: RegExp }>;
  validators: Map<string, ValidateFunction>;
  ajv: Ajv2020;
  defs: JsonObject;
}

const compiled = new Map<string, CompiledDocument>();

function compile(document: OpenApiDocument): CompiledDocument {
  const key = createHash('sha256').update(JSON.stringify(document)).digest('hex');
  let entry = compiled.get(key);
  if (!entry) {
    const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, validateFormats: true });
    addFormats(ajv);
    // OpenAPI 3.1's own schema keywords (annotations for Ajv).
    ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
    // The most literal template first, so `/guides/{slug}.md` is matched before `/guides/{slug}`.
    const literalLength = (template: string): number => template.replace(/\{[^}]+\}/g, '').length;
    const templates = Object.keys(document.paths)
      .sort((a, b) => literalLength(b) - literalLength(a))
      .map((template) => ({
        template,
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
      }));
    const defs = rewriteRefs((document.components?.schemas ?? {}) as Json) as JsonObject;
    entry = { document, templates, validators: new Map(), ajv, defs };
    compiled.set(key, entry);
  }
  return entry;
}

function validatorFor(doc: CompiledDocument, pointer: string, schema: JsonObject): ValidateFunction {
  let validate = doc.validators.get(pointer);
  if (!validate) {
    validate = doc.ajv.compile({ ...(rewriteRefs(schema) as JsonObject), $defs: doc.defs });
    doc.validators.set(pointer, validate);
  }
  return validate;
}

function decodeBody(response: ObservedResponse): string {
  const encoding = String(response.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const raw = response.rawBody;
  // HEAD and 304 keep the Content-Encoding of the representation but send no bytes.
  if (raw.length === 0) return '';
  if (encoding === 'gzip') return gunzipSync(raw).toString('utf8');
  if (encoding === 'br') return brotliDecompressSync(raw).toString('utf8');
  if (encoding === 'deflate') return inflateSync(raw).toString('utf8');
  return raw.toString('utf8');
}

function headerValue(value: string | string[] | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

function describe(response: ObservedResponse): string {
  return `${response.method} ${response.url} → ${response.statusCode}`;
}

function fail(response: ObservedResponse, message: string): never {
  throw new ContractViolation(`${describe(response)}: ${message}`);
}

/**
 * Checks one response against the document. Throws ContractViolation on any mismatch; returns how
 * the response was checked (the caller decides whether it counts).
 */
export function checkResponse(document: unknown, response: ObservedResponse): CheckResult {
  const doc = compile(document as OpenApiDocument);
  const method = response.method.toUpperCase();
  const path = response.url.split('?')[0] ?? '/';
  const mediaType = headerValue(response.headers['content-type'])?.split(';')[0]?.trim().toLowerCase();
  const hasNoBody = method === 'HEAD' || response.statusCode === 304 || response.statusCode === 204;
  const match = doc.templates.find(({ pattern }) => pattern.test(path));

  // CORS preflight is the CORS protocol, not an operation of the API.
  if (method === 'OPTIONS' || !match) {
    if (mediaType === 'application/problem+json' && !hasNoBody) {
      const problem = doc.document.components?.schemas?.Problem;
      if (!problem) fail(response, 'the document has no components.schemas.Problem');
      const validate = validatorFor(doc, '#/components/schemas/Problem', { $ref: '#/components/schemas/Problem' });
      checkJson(response, validate, decodeBody(response));
      return { kind: 'problemComponent', key: `${method} (undocumented path) ${response.statusCode}` };
    }
    return { kind: 'notDescribed', key: `${method} ${match ? match.template : path} ${response.statusCode}` };
  }

  // HEAD shares the GET; a method the path has no operation for gets the 405 that the path's
  // operation declares (GET everywhere, POST on /mcp).
  const item = doc.document.paths[match.template] ?? {};
  const operation = item[method === 'HEAD' ? 'get' : method.toLowerCase()] ?? item.get ?? Object.values(item)[0];
  if (!operation) fail(response, `the document declares no operation for ${match.template}`);
  const responses = operation.responses as Record<string, JsonObject> | undefined;
  const declared = responses?.[String(response.statusCode)];
  if (!declared) {
    fail(
      response,
      `status ${response.statusCode} is not declared for ${method} ${match.template} (declared: ${Object.keys(responses ?? {}).join(', ')})`,
    );
  }

  const content = declared.content as Record<string, JsonObject> | undefined;
  const body = decodeBody(response);
  if (!content) {
    if (body.length > 0) fail(response, `GET ${match.template} declares no body for ${response.statusCode}, got ${body.length} bytes`);
  } else if (!hasNoBody) {
    if (!mediaType || !content[mediaType]) {
      fail(response, `media type ${mediaType ?? '(none)'} is not declared (declared: ${Object.keys(content).join(', ')})`);
    }
    const pointer = `${match.template} ${response.statusCode} ${mediaType}`;
    const schema = content[mediaType].schema as JsonObject;
    const validate = validatorFor(doc, pointer, schema);
    // A JSON body is checked parsed; any other (Markdown, an MCP event stream) as the string it is.
    if (mediaType.endsWith('json')) checkJson(response, validate, body);
    else if (!validate(body)) fail(response, `body does not match the declared schema: ${doc.ajv.errorsText(validate.errors)}`);
  } else if (mediaType && !content[mediaType]) {
    fail(response, `media type ${mediaType} is not declared (declared: ${Object.keys(content).join(', ')})`);
  }

  const headers = (declared.headers ?? {}) as Record<string, { schema?: JsonObject }>;
  for (const [name, header] of Object.entries(headers)) {
    const value = headerValue(response.headers[name.toLowerCase()]);
    if (value === undefined || !header.schema) continue;
    const schema = header.schema;
    const candidate: Json = schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
    const validate = validatorFor(doc, `${match.template} ${response.statusCode} header ${name}`, schema);
    if (!validate(candidate)) {
      fail(response, `header ${name}: ${JSON.stringify(value)} does not match its declared schema: ${doc.ajv.errorsText(validate.errors)}`);
    }
  }

  return { kind: 'operation', key: `${method} ${match.template} ${response.statusCode}` };
}

function checkJson(response: ObservedResponse, validate: ValidateFunction, body: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    fail(response, `body is not JSON: ${body.slice(0, 120)}`);
  }
  if (!validate(parsed)) {
    fail(response, `body does not match the declared schema: ${JSON.stringify(validate.errors, null, 1).slice(0, 2000)}`);
  }
}

/** Checks a response (for instance one seen over a real socket) and counts it in this file's tally. */
export function checkAndCount(document: unknown, response: ObservedResponse): CheckResult {
  const result = checkResponse(document, response);
  count(result);
  return result;
}

interface InjectingApp {
  inject: (...args: never[]) => unknown;
  swagger: () => unknown;
}

interface InjectedResponse {
  statusCode: number;
  headers: ObservedResponse['headers'];
  rawPayload: Buffer;
  raw: { req: { method?: string; url?: string } };
}

/**
 * Wraps app.inject so that every response it resolves with is checked against the app's own
 * document (app.swagger(): what /openapi.json serves, without the content's contact and
 * license). The chainable and callback forms of inject pass through unchecked; no test here uses them.
 */
export function checkEveryInjectedResponse(app: InjectingApp): void {
  const inject = app.inject.bind(app) as (options?: unknown, callback?: unknown) => unknown;
  const wrapped = (options?: unknown, callback?: unknown): unknown => {
    if (options === undefined || typeof callback === 'function') return inject(options, callback);
    return (inject(options) as Promise<InjectedResponse>).then((response) => checkInjected(app, response));
  };
  (app as { inject: unknown }).inject = wrapped;
}

/** Checks one injected response against the app's document, counts it, and hands it back. */
export function checkInjected<R extends InjectedResponse>(app: Pick<InjectingApp, 'swagger'>, response: R): R {
  checkAndCount(app.swagger(), {
    method: response.raw.req.method ?? 'GET',
    url: response.raw.req.url ?? '/',
    statusCode: response.statusCode,
    headers: response.headers,
    rawBody: response.rawPayload,
  });
  return response;
}

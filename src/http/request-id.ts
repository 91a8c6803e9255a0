/** Request ids: a client's own X-Request-Id when it is sane, else a new UUID. */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFor(headers: IncomingHttpHeaders): string {
  const incoming = headers['x-request-id'];
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

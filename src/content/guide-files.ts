/**
 * Reads and validates guide files (guides/*.md), in name order: in this thread for a few files, on
 * worker threads for many. Parsing front matter and Markdown, hashing and preparing a guide for
 * the store is CPU work independent of every other file, so a large folder is parsed by every
 * core at once; results still come back one by one in name order, as if one thread had read them
 * (problems, duplicate slugs and row ids come out the same).
 *
 * This thread reads the files (synchronously: the threads wait for it much less than it waits for
 * the disk) and hands them to the workers in batches of BATCH_FILES, so a worker never waits for a
 * file that is not in the page cache (a cold read costs more than parsing a guide here, and async
 * reads cost several thread hops each). Workers are at most READ_AHEAD_BATCHES batches ahead of the
 * consumer: memory stays bounded when the consumer (the database) is slower, and the files being
 * read are always near the consumer's position, as a single reader's would be.
 */
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import type { GuideRecord } from '../guides/guide.js';
import { DEFAULT_MAX_GUIDE_BYTES } from '../guides/limits.js';
import { startWorker } from '../lib/start-worker.js';
import { hashJson } from '../store/import-plan.js';
import type { PreparedGuide } from '../store/guide-store.js';
import type { GuidePreparation, GuidePreparer } from '../store/prepare-guide.js';
import { parseGuideFile } from './parse-guide-file.js';
import type { ContentProblem } from './problems.js';

/** One guide file read: the guide when it is valid, else its problems. */
export interface GuideFileResult {
  /** `guides/<name>`, as problems name it. */
  file: string;
  problems: ContentProblem[];
  prepared?: PreparedGuide;
}

export interface ReadGuideFilesOptions {
  /** What the store wants computed per guide while reading (on the workers too); none when absent. */
  preparation?: GuidePreparation;
  /** Worker threads; default: one per core for MIN_FILES_FOR_WORKERS files or more on several cores, else none. */
  workers?: number;
  /** Largest guide file accepted, in bytes (MAX_GUIDE_BYTES); default DEFAULT_MAX_GUIDE_BYTES. */
  maxGuideBytes?: number;
}

/** A guide file's text, or why it has none. */
export type GuideSource = { source: string } | { problem: string };

/** What a worker sends back for a file: the preparer's dictionary travels in the batch replies. */
interface FileReply {
  file: string;
  problems: ContentProblem[];
  guide?: GuideRecord;
  contentHash?: string;
  prepared?: unknown;
}

export interface GuideWorkerData {
  /** The GuidePreparerModule the worker loads, when the store wants preparation. */
  preparerModuleUrl?: string;
}

export interface GuideWorkerRequest {
  batch: number;
  /** Each file's name and text (or why it has none). */
  files: ({ name: string } & GuideSource)[];
}

export interface GuideWorkerReply {
  batch: number;
  results: FileReply[];
  /** Entries the worker's preparer added to its dictionary in this batch, in order. */
  newEntries: string[];
}

const MIN_FILES_FOR_WORKERS = 200;
const MAX_WORKERS = 8;
const BATCH_FILES = 8;
/** Batches dispatched to one worker at a time (one being read, one waiting, so it never idles). */
const BATCHES_PER_WORKER = 2;
/** Batches read but not yet consumed, per worker. */
const READ_AHEAD_BATCHES = 4;

/** Not UTF-8 is not text: refused instead of read with replacement characters. The BOM stays for the parsers to see. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text of guide file `name` in `dir`/guides; its size is checked before it is read. */
export function readGuideSource(dir: string, name: string, maxBytes = DEFAULT_MAX_GUIDE_BYTES): GuideSource {
  let bytes: Buffer;
  try {
    const fd = openSync(path.join(dir, 'guides', name), 'r');
    try {
      if (fstatSync(fd).size > maxBytes) return tooLarge(maxBytes);
      bytes = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    return { problem: 'is unreadable' };
  }
  // It may have grown since fstat.
  if (bytes.length > maxBytes) return tooLarge(maxBytes);
  try {
    return { source: UTF8.decode(bytes) };
  } catch {
    return { problem: 'is not valid UTF-8 text: save it as UTF-8' };
  }
}

function tooLarge(maxBytes: number): GuideSource {
  return { problem: `is larger than ${maxBytes} bytes (MAX_GUIDE_BYTES)` };
}

/** Validates and prepares one guide file. */
export function prepareGuideFile(name: string, read: GuideSource, preparer?: GuidePreparer): FileReply {
  const file = `guides/${name}`;
  if ('problem' in read) return { file, problems: [{ file, message: read.problem }] };
  const parsed = parseGuideFile(file, name.slice(0, -'.md'.length), read.source);
  const guide = parsed.guide;
  if (!guide) return { file, problems: parsed.problems };
  const prepared = preparer?.prepare(guide);
  return { file, problems: parsed.problems, guide, contentHash: hashJson(guide), ...(prepared === undefined ? {} : { prepared }) };
}

/** Reads the guide files `names` (sorted) of `dir`, yielding each result in that order. */
export async function* readGuideFiles(
  dir: string,
  names: readonly string[],
  options: ReadGuideFilesOptions = {},
): AsyncGenerator<GuideFileResult> {
  const workers = options.workers ?? (names.length >= MIN_FILES_FOR_WORKERS ? Math.min(os.availableParallelism(), MAX_WORKERS) : 0);
  if (workers < 1 || (options.workers === undefined && workers < 2)) {
    const preparer = options.preparation?.create();
    const dictionary: string[] = [];
    for (const name of names) {
      const reply = prepareGuideFile(name, readGuideSource(dir, name, options.maxGuideBytes), preparer);
      if (preparer) for (const entry of preparer.takeNewEntries()) dictionary.push(entry);
      yield toResult(reply, preparer, dictionary);
    }
    return;
  }
  yield* readOnWorkers(dir, names, workers, options.preparation, options.maxGuideBytes);
}

/** `preparer` only completes preparations (any one of the same kind will do); `dictionary` is that of the one that made them. */
function toResult(reply: FileReply, preparer: GuidePreparer | undefined, dictionary: readonly string[]): GuideFileResult {
  const { file, problems, guide, contentHash, prepared } = reply;
  if (!guide || contentHash === undefined) return { file, problems };
  const search = preparer && prepared !== undefined ? preparer.complete(prepared, dictionary) : undefined;
  return { file, problems, prepared: { guide, contentHash, ...(search === undefined ? {} : { search }) } };
}

async function* readOnWorkers(
  dir: string,
  names: readonly string[],
  count: number,
  preparation: GuidePreparation | undefined,
  maxBytes?: number,
): AsyncGenerator<GuideFileResult> {
  const batches: string[][] = [];
  for (let start = 0; start < names.length; start += BATCH_FILES) batches.push(names.slice(start, start + BATCH_FILES));
  const data: GuideWorkerData = preparation ? { preparerModuleUrl: preparation.moduleUrl } : {};
  // This thread's preparer prepares nothing: it completes what the workers' preparers made.
  const completer = preparation?.create();
  const slots = Array.from({ length: count }, () => ({
    worker: startWorker(import.meta.url, 'guide-file-worker', data) as Worker,
    inFlight: 0,
    /** The worker's preparer dictionary, as its messages tell it. */
    dictionary: [] as string[],
  }));
  const ready = new Map<number, GuideFileResult[]>();
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  let dispatched = 0;
  let consumed = 0;
  let finished = false;

  const dispatch = (): void => {
    for (const slot of slots) {
      while (slot.inFlight < BATCHES_PER_WORKER && dispatched < batches.length && dispatched - consumed < READ_AHEAD_BATCHES * count) {
        const files = (batches[dispatched] as string[]).map((name) => ({ name, ...readGuideSource(dir, name, maxBytes) }));
        slot.worker.postMessage({ batch: dispatched, files } satisfies GuideWorkerRequest);
        slot.inFlight += 1;
        dispatched += 1;
      }
    }
  };
  for (const slot of slots) {
    slot.worker.on('message', (reply: GuideWorkerReply) => {
      slot.inFlight -= 1;
      for (const entry of reply.newEntries) slot.dictionary.push(entry);
      ready.set(
        reply.batch,
        reply.results.map((result) => toResult(result, completer, slot.dictionary)),
      );
      dispatch();
      wake?.();
    });
    slot.worker.on('error', (error) => {
      failure ??= new Error(`reading guide files failed: ${error.message}`, { cause: error });
      wake?.();
    });
    slot.worker.on('exit', (code) => {
      if (!finished) failure ??= new Error(`a guide-reading worker stopped (exit code ${code})`);
      wake?.();
    });
  }

  try {
    dispatch();
    for (let batch = 0; batch < batches.length; batch += 1) {
      let results = ready.get(batch);
      while (!results) {
        if (failure) throw failure;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        results = ready.get(batch);
      }
      ready.delete(batch);
      consumed = batch + 1;
      dispatch();
      yield* results;
    }
  } finally {
    finished = true;
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }
}

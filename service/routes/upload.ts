import { StringDecoder } from 'node:string_decoder';
import busboy from 'busboy';
import { Router, type Request, type Response } from 'express';
import { STEP_BUDGET_MS, stepper } from '../lib/yield-to-loop';
import { chunked } from '../content/export';
import { batchVocabularyProblem, validateItem, type Item, type ItemInput, type ItemType } from '../content/item';
import { MAX_NAMED_COLLIDING, describeItems, idCollisions, type CollidingItem } from '../content/id-collisions';
import {
  FileParseError,
  UPLOAD_EXTENSIONS,
  formatOf,
  parseFileInSteps,
  type UploadFormat,
} from '../content/parse/parse-files';
import { uploadFields } from '../http/contract/upload';
import { validate } from '../http/contract/validate';
import { HttpError, badRequest } from '../http/errors';
import { writeChunks } from '../http/write-chunks';
import { requireWriteAccess } from './auth';
import type { FeatureContext } from './context';
import { invalidItem, storeWrite } from './write-errors';

import { MAX_UPLOAD_FILES } from '../http/contract/upload';
import { HTTP_ROUTES } from '../../contract';

export { MAX_UPLOAD_FILES };
/** Most items in one upload (all files together). */
export const MAX_UPLOAD_ITEMS = 10_000;

const FILE_FIELDS = new Set(['file', 'files', 'file[]', 'files[]']);

/** One file of an upload. */
export interface UploadedFile {
  readonly name: string;
  readonly format: UploadFormat;
  /**
   * The file's bytes in the pieces they arrived in: joined, a 6 MB file was one copy into fresh
   * memory, ~30 ms of one step on the test machine (issue 37); they are decoded a piece at a time.
   */
  readonly data: readonly Uint8Array[];
}

/** What a multipart upload held: its files and the `type` field. */
export interface Received {
  readonly files: UploadedFile[];
  readonly type?: ItemType;
}

const accepted = Object.keys(UPLOAD_EXTENSIONS).join(', ');

/** Most non-file fields in one upload (only `type` is read). */
export const MAX_UPLOAD_FIELDS = 20;
/** Longest value of a non-file field, bytes. */
export const MAX_FIELD_BYTES = 1024;

/**
 * Reads the multipart body, enforcing the size limit on the whole body and on each file. Every
 * limit busboy counts (files, fields, parts, field size) refuses the whole upload: busboy would
 * otherwise skip the extra parts silently and the upload would be stored in part. Every stream
 * has an error listener: busboy destroys the open file stream with an error when the body ends
 * early, and an unheard 'error' would end the process.
 */
function receive(req: Request, maxBytes: number): Promise<Received> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: req.headers,
        limits: {
          fileSize: maxBytes,
          files: MAX_UPLOAD_FILES,
          fields: MAX_UPLOAD_FIELDS,
          fieldSize: MAX_FIELD_BYTES,
          parts: MAX_UPLOAD_FILES + MAX_UPLOAD_FIELDS,
        },
      });
    } catch (e) {
      reject(badRequest(`not a valid multipart/form-data request: ${(e as Error).message}`, { field: 'body' }));
      return;
    }
    const files: UploadedFile[] = [];
    let type: ItemType | undefined;
    let failed = false;
    let total = 0;
    const fail = (err: HttpError) => {
      if (failed) return;
      failed = true;
      req.unpipe(bb);
      req.off('data', count);
      req.off('close', onClose);
      // Keep reading (and discarding) so the client can finish sending and see the answer.
      req.resume();
      reject(err);
    };
    const tooLarge = () =>
      new HttpError(
        413,
        'payload_too_large',
        `the upload exceeds the limit of ${maxBytes} bytes (MAX_BODY_SIZE); nothing was stored`,
      );
    const count = (chunk: Buffer) => {
      total += chunk.length;
      if (total > maxBytes) fail(tooLarge());
    };
    // The client went away before busboy saw the end of the form: nothing is stored.
    const onClose = () => {
      if (!req.complete)
        fail(badRequest('the upload ended before its last part; nothing was stored', { field: 'body' }));
    };
    const malformed = (e: Error) =>
      fail(badRequest(`the multipart body is malformed: ${e.message}; nothing was stored`, { field: 'body' }));
    req.on('data', count);
    req.on('close', onClose);
    bb.on('file', (field, stream, info) => {
      stream.on('error', malformed);
      const name = info.filename || '(unnamed)';
      if (failed) return stream.resume();
      if (!FILE_FIELDS.has(field)) {
        stream.resume();
        return fail(badRequest(`unexpected file field "${field}": send files in the field "file"`, { field }));
      }
      const format = formatOf(name);
      if (!format) {
        stream.resume();
        return fail(
          new HttpError(415, 'unsupported_file_type', `${name}: unsupported file type; accepted: ${accepted}`, {
            field: 'file',
            file: name,
          }),
        );
      }
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => fail(tooLarge()));
      stream.on('end', () => {
        if (!failed) files.push({ name, format, data: chunks });
      });
    });
    bb.on('field', (field, value, info) => {
      if (info.valueTruncated || info.nameTruncated) {
        return fail(
          new HttpError(
            413,
            'field_too_large',
            `field "${field}" is longer than ${MAX_FIELD_BYTES} bytes; nothing was stored`,
            { field },
          ),
        );
      }
      if (field !== 'type') return;
      try {
        type = validate(uploadFields, { type: value }).type;
      } catch (e) {
        fail(e as HttpError);
      }
    });
    bb.on('filesLimit', () =>
      fail(
        new HttpError(413, 'too_many_files', `at most ${MAX_UPLOAD_FILES} files per upload; nothing was stored`, {
          field: 'file',
        }),
      ),
    );
    bb.on('fieldsLimit', () =>
      fail(
        new HttpError(
          413,
          'too_many_fields',
          `at most ${MAX_UPLOAD_FIELDS} non-file fields per upload; nothing was stored`,
          { field: 'body' },
        ),
      ),
    );
    bb.on('partsLimit', () =>
      fail(
        new HttpError(
          413,
          'too_many_parts',
          `at most ${MAX_UPLOAD_FILES + MAX_UPLOAD_FIELDS} parts per upload; nothing was stored`,
          { field: 'body' },
        ),
      ),
    );
    bb.on('error', malformed);
    bb.on('close', () => {
      if (!failed) resolve({ files, ...(type ? { type } : {}) });
    });
    req.pipe(bb);
  });
}

/** Most bytes of an uploaded file decoded to one piece of text (`utf8Pieces`). */
export const DECODE_SLICE_BYTES = 64 * 1024;

/**
 * The text of `data` (its pieces together), decoded a slice of at most `sliceBytes` at a time, a
 * piece of text per slice (a character cut by a slice's end is completed from the next, so a
 * piece may be empty). Pieces of 64 KB are young-generation strings that die there once their
 * lines are parsed: the whole text of a 12 MB file was one ~15 ms step, and flattening it for
 * the lines' split another (issue 37).
 */
export function* utf8Pieces(data: readonly Uint8Array[], sliceBytes = DECODE_SLICE_BYTES): Generator<string> {
  // StringDecoder, not TextDecoder: its text is Buffer's (one byte a character for ASCII, where
  // TextDecoder's was two, and splitting the lines of that took ~35 ms).
  const decoder = new StringDecoder('utf8');
  // Each piece is given once the next is decoded, so the last carries what `end()` completes.
  let held: string | undefined;
  for (const chunk of data) {
    for (let at = 0; at < chunk.length; at += sliceBytes) {
      if (held !== undefined) yield held;
      held = decoder.write(chunk.subarray(at, at + sliceBytes));
    }
  }
  const rest = decoder.end();
  if (held !== undefined) yield held + rest;
  else if (rest) yield rest;
}

/**
 * Every file's items, validated; the first problem (file, item, field) is an error. In steps of
 * the event loop, as `/api/ingest-batch` validates: `step()` (time-steps.ts) after each line or
 * array element a file is parsed into and after each item is validated. 10,000 items of 50 tags
 * held the loop 1.07-1.44 s in one step (issue 37).
 */
export async function uploadedItems(
  received: Received,
  step: () => Promise<void> | undefined,
  vectorDimensions?: number,
): Promise<Array<ItemInput & { id: string }>> {
  const out: Array<ItemInput & { id: string }> = [];
  const origins: CollidingItem[] = [];
  // Ids seen, an item at a time: the collisions are named (one pass over all) only when there are any.
  const ids = new Set<string>();
  let collides = false;
  for (const f of received.files) {
    let raws: unknown[];
    try {
      raws = await parseFileInSteps(
        f.name,
        f.format,
        () => utf8Pieces(f.data),
        step,
        received.type ? { type: received.type } : {},
        MAX_UPLOAD_ITEMS,
      );
    } catch (e) {
      if (e instanceof FileParseError) {
        throw badRequest(`${f.name}: ${e.message}`, {
          field: 'file',
          file: f.name,
          ...(e.line ? { line: e.line } : {}),
        });
      }
      throw e;
    }
    if (!raws.length) throw badRequest(`${f.name}: holds no items`, { field: 'file', file: f.name });
    for (let index = 0; index < raws.length; index++) {
      const v = validateItem(raws[index], { vectorDimensions });
      if (!v.ok) {
        const where = raws.length > 1 ? `${f.name} item ${index}: ` : `${f.name}: `;
        const err = invalidItem(v.issues, where);
        throw new HttpError(err.status, err.code, err.message, { ...err.details, file: f.name, index });
      }
      out.push(v.item);
      origins.push({ file: f.name, index, title: v.item.title });
      if (ids.has(v.item.id)) collides = true;
      else ids.add(v.item.id);
      await step();
    }
    if (out.length > MAX_UPLOAD_ITEMS)
      throw new HttpError(413, 'too_many_items', `at most ${MAX_UPLOAD_ITEMS} items per upload`, { field: 'file' });
  }
  const collision = collides ? idCollisions(out.map((item, i) => ({ ...origins[i], id: item.id })))[0] : undefined;
  if (collision) {
    // All or nothing, like every other fault of an upload: stored, each would replace the one before.
    const first = collision.items[0];
    throw new HttpError(
      422,
      'duplicate_id',
      `${describeItems(collision.items)} would all be stored under the id "${collision.id}", each replacing the one before; nothing was stored: give each a distinct id or title`,
      {
        field: 'id',
        id: collision.id,
        file: first.file,
        index: first.index,
        items: collision.items.slice(0, MAX_NAMED_COLLIDING),
        count: collision.items.length,
      },
    );
  }
  return out;
}

/**
 * The 201 answer `{count, items}`, an item at a time: `res.json` of 10,000 stored items was one
 * 135 ms step of the event loop (issue 37).
 */
function* answerParts(stored: readonly Item[]): Generator<string> {
  yield `{"count":${stored.length},"items":[`;
  for (let i = 0; i < stored.length; i++) yield `${i ? ',' : ''}${JSON.stringify(stored[i])}`;
  yield ']}';
}

/**
 * `POST /api/upload`, multipart/form-data with one or more files in the field `file` (`.md`
 * with YAML front matter, `.txt`, `.json`, `.ndjson`) and an optional field `type` (default
 * type of `.md`/`.txt` items). All or nothing: one bad file or item and nothing is stored.
 * 201 `{count, items}`, streamed. Parsing, validation and the answer go in steps of the event loop.
 *
 * Routes are added to `r` (createFeatures passes one router for every group, so a request walks one).
 */
export function uploadRouter(ctx: FeatureContext, r: Router = Router()): Router {
  const maxBytes = ctx.deps.settings.service.maxBodyBytes;
  r.post(HTTP_ROUTES.upload.path, requireWriteAccess(ctx.deps.settings), async (req: Request, res: Response) => {
    if (!req.is('multipart/form-data')) {
      throw new HttpError(415, 'unsupported_media_type', 'send multipart/form-data with the files in the field "file"');
    }
    const declared = Number(req.get('content-length') ?? 0);
    let received: Received;
    try {
      if (declared > maxBytes) {
        throw new HttpError(
          413,
          'payload_too_large',
          `the upload exceeds the limit of ${maxBytes} bytes (MAX_BODY_SIZE); nothing was stored`,
        );
      }
      received = await receive(req, maxBytes);
    } catch (e) {
      // The rest of the body is unread: the error handler answers, discards it (bounded) and
      // closes the connection (http/drain.ts).
      if (!req.readableEnded) req.resume();
      throw e;
    }
    if (!received.files.length)
      throw badRequest('no file: attach one or more files in the field "file"', { field: 'file' });
    const step = stepper();
    const items = await uploadedItems(received, step, ctx.deps.settings.embeddings.dimensions);
    const vocabulary = await batchVocabularyProblem(items, step);
    if (vocabulary) throw new HttpError(413, 'batch_vocabulary_too_large', vocabulary, { field: 'file' });
    const stored = await storeWrite(() => ctx.content.ingest(items));
    // Streamed in slices (writeChunks, as exports are): the items are stored whatever the client does next.
    res.status(201).type('application/json');
    await writeChunks(res, chunked(answerParts(stored)), { sliceMs: STEP_BUDGET_MS });
  });
  return r;
}

import { z } from 'zod';
import { itemSchema, itemTypeSchema } from './item';

/** Most files in one upload. */
export const MAX_UPLOAD_FILES = 100;

/** The non-file fields of `POST /api/upload` (multipart/form-data): only `type` is read. */
export const uploadFields = z.object({
  type: z
    .preprocess((v) => (typeof v === 'string' ? v.trim() : v), itemTypeSchema.optional())
    .meta({ description: 'Default type of .md and .txt items (front matter may override).' }),
});

/** The multipart body as documented. */
export const uploadRequestDoc = z
  .object({
    file: z
      .array(z.string().meta({ contentMediaType: 'application/octet-stream' }))
      .min(1)
      .max(MAX_UPLOAD_FILES)
      .meta({
        description:
          'One or more files: .md (YAML front matter), .txt, .json, .ndjson. Also accepted as files, file[] or files[].',
      }),
    type: itemTypeSchema.optional(),
  })
  .meta({ id: 'UploadRequest' });

/** 201: every item of every file stored. */
export const uploadResponseSchema = z
  .object({ count: z.int().min(1), items: z.array(itemSchema) })
  .meta({ id: 'UploadResponse' });

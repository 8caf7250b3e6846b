import { ITEM_TYPES } from '../content/item';
import { dayNumber, normalFilter, type ItemFilter } from '../content/item-filter';
import { atOnce } from '../lib/yield-to-loop';
import { NO_TYPE, TYPE_CODE, type DocAttributeTable } from './doc-attributes';
import { SharedBuild } from './shared-build';
import { TagDictionary } from './tag-dictionary';
import type { DocKeep } from './index/postings-index';

/** The documents of the index served, as `DocColumns` reads them. */
export interface ColumnSource {
  /** Short ids are below this. */
  readonly idLimit: number;
  /** Changes when short ids are renumbered (`SegmentedIndex.numbering`). */
  readonly numbering: object;
  /**
   * Document `doc`'s row in `attributes`, entered (a restored document's is entered from its item
   * at its first read); -1 once the document is deleted. May grow `attributes`' arrays: read them after.
   */
  rowOf(doc: number): number;
  /** The documents' attributes by row; its dictionary's tag codes are the columns'. */
  readonly attributes: DocAttributeTable;
}

// Documents entered between yields while the columns are extended: at 1M documents on a loaded
// machine (load ~22) a step of 4,096 took up to 46 ms of the loop thread's CPU (a map look-up of
// each document's attributes by id), one of 1,024 up to 13.4 ms at load ~8 (page faults of fresh
// arrays); steps are small and the runner's slicer yields on its clock (every ~5 ms). A document
// is now a copy of its attributes' row (~60 ns at 1M), but a restored segment's first build
// still reads each document's item (`IndexLifecycle.attributeRow`): the steps stay this small.
const STEP_DOCS = 256;
// Documents a step of a filter's compilation (a few array reads and closure calls each).
const COMPILE_STEP_DOCS = 4096;
// Documents a step of the passes that only count or set bits by document (`countingBlocks`,
// `makingTypeBitmaps`): an array read and a write each.
const COUNT_STEP_DOCS = 65_536;

const grown = <A extends Int32Array | Uint8Array | Float64Array>(a: A, n: number, make: (n: number) => A): A => {
  if (a.length >= n) return a;
  const b = make(Math.max(n, a.length * 2, 1024));
  b.set(a);
  return b;
};

/**
 * A filter compiled against the columns: checks by short id, a few array reads each. `type`,
 * `tag` and `date` are its three parts (each true when not given), so that a disjunctive facet
 * can leave its own part out.
 */
export interface CompiledFilter {
  /** Whether no part is given (every live document passes). */
  readonly empty: boolean;
  type(doc: number): boolean;
  tag(doc: number): boolean;
  date(doc: number): boolean;
  /** The type part on a type code (as `DocColumns.types` holds them). */
  typeCode(code: number): boolean;
  /** The tag part on the tag codes `codes[from … to - 1]`. */
  tagList(codes: Int32Array, from: number, to: number): boolean;
  /** All three parts; with a bitmap of the documents passing them (a count ANDs it a word at a time). */
  readonly all: DocKeep;
  /** Documents of the columns passing all three parts (deleted ones among them): every one when `empty`. */
  readonly kept: number;
  /** Each given part's bitmap (as `all.bits`); absent: the part is not given. */
  readonly bits: { readonly type?: Int32Array; readonly tag?: Int32Array; readonly date?: Int32Array };
}

/**
 * `DocColumns.groups`: the documents grouped by their type and tags (a facet group), so that a
 * facet count adds one per matching document to its group and spreads the groups' counts over
 * types and tags once, at the end.
 */
export interface FacetGroups {
  /** Document d's group. */
  readonly of: Int32Array;
  /** Groups: `type[g]` is group g's type code. */
  readonly count: number;
  readonly type: Uint8Array;
  /** Group g's tag codes are `tags[start[g] … start[g + 1] - 1]` (a document's, sorted). */
  readonly start: Int32Array;
  readonly tags: Int32Array;
}

// Bits of a type code in a facet group's integer key (`NO_TYPE` as `ITEM_TYPES.length`).
const TYPE_BITS = 32 - Math.clz32(ITEM_TYPES.length);
// Slots of the facet groups' direct-mapped cache: 2^12 (32 KB).
const GROUP_CACHE_BITS = 12;

/**
 * Documents a block of `DocColumns.groupBlocks` holds by default: 2^18, 262,144 (`unionSize`'s
 * steps of 8,192 words). At 1M documents four blocks of a count per facet group.
 */
export const GROUP_BLOCK_DOCS = 1 << 18;

/** `DocColumns`' options. */
export interface DocColumnsOptions {
  /** Documents a block of `groupBlocks` holds (a multiple of 32). @default GROUP_BLOCK_DOCS */
  readonly groupBlockDocs?: number;
}

/**
 * `DocColumns.groupBlocks`: per block of `size` documents (block b: short ids b·size … (b + 1)·size
 * − 1), how many of the entered documents are in each facet group (`counts[b][g]`, absent = 0).
 */
export interface GroupBlocks {
  readonly size: number;
  readonly counts: readonly Int32Array[];
}

// Compiled filters kept per generation of the columns (their bitmaps cost a pass over the documents).
const KEPT_FILTERS = 16;

/**
 * The documents' types, tags, days and update times in typed arrays by short id (tags as codes
 * into a dictionary, in CSR form), so that a search checks its filters on each candidate before
 * scoring it, counts facets and sorts by date in passes over arrays instead of looking each
 * document's metadata up by id. Short ids only grow between merges (a replaced item gets a new
 * one, the old one is deleted), so the columns are extended with the documents added since, and
 * rebuilt only when a merge renumbers them (`ColumnSource.numbering`). Entries of deleted
 * documents stay until then: readers check `externalId`.
 */
export class DocColumns {
  types = new Uint8Array(0);
  days = new Int32Array(0);
  updated = new Float64Array(0);
  /** Document d's tag codes are `tagCodes[tagStart[d] … tagStart[d + 1] - 1]`. */
  tagStart = new Int32Array(1);
  tagCodes = new Int32Array(0);
  // The tag codes' dictionary: the source's (`ColumnSource.attributes`), adopted at its first update.
  private tags = new TagDictionary();
  /** Document d's facet group (`groups`). */
  private groupOf = new Int32Array(0);
  // The facet groups entered so far, by key (type code and sorted tag codes), kept across
  // rebuilds as the tag dictionary is (cleared at a rebuild once they outnumber twice the documents).
  private readonly groupKey = new Map<number | string, number>();
  // `groupKey`'s integer keys, direct-mapped (-1: empty), and their groups.
  private readonly groupCacheKey = new Int32Array(1 << GROUP_CACHE_BITS).fill(-1);
  private readonly groupCacheGroup = new Int32Array(1 << GROUP_CACHE_BITS);
  private groupType = new Uint8Array(0);
  private groupStart = new Int32Array(1);
  private groupTags = new Int32Array(0);
  /** Documents entered: short ids below this. */
  built = 0;
  private numbering: object | undefined;
  /** Bumped whenever the columns change (entered documents, a rebuild): derived orders hold for one. */
  generation = 0;
  // Compiled filters of this generation by their normal form, most recent last.
  private compiled = new Map<string, CompiledFilter>();
  private compiledAt = -1;
  private readonly blockDocs: number;
  // `groupBlocks`' counts, of the documents below `blocksBuilt` (reset with the numbering).
  private blockCounts: Int32Array[] = [];
  private blocksBuilt = 0;

  constructor(opts: DocColumnsOptions = {}) {
    this.blockDocs = opts.groupBlockDocs ?? GROUP_BLOCK_DOCS;
    if (!(this.blockDocs >= 32 && this.blockDocs % 32 === 0))
      throw new Error(`DocColumns: groupBlockDocs must be a positive multiple of 32, not ${this.blockDocs}`);
  }

  /** Whether the columns are of the numbering `numbering` (`ColumnSource.numbering`; entered or not). */
  numberedAs(numbering: object): boolean {
    return this.numbering === numbering;
  }

  /**
   * Brings the columns up to the index's documents, yielding every `STEP_DOCS` documents (a
   * rebuild at a million documents enters them all: about a second of work in steps). Each
   * document is whole before a yield: a caller may drop the job there, and the next one goes on
   * from the documents entered.
   */
  *update(src: ColumnSource): Generator<void, void> {
    const dictionary = src.attributes.dictionary;
    if (src.numbering !== this.numbering || dictionary !== this.tags) {
      if (dictionary !== this.tags) {
        // The facet groups' tag codes are the old dictionary's.
        this.tags = dictionary;
        this.groupKey.clear();
        this.groupCacheKey.fill(-1);
        this.groupStart = new Int32Array(1);
      }
      this.numbering = src.numbering;
      // Every array is entered again in place (`tagStart[0]` is 0 for good): a new `tagStart`
      // here was the one array a merge's rebuild made, 4 MB at 1M documents.
      this.built = 0;
      this.blockCounts = [];
      this.blocksBuilt = 0;
      this.generation += 1;
      if (this.groupKey.size > 2 * src.idLimit + 1024) {
        this.groupKey.clear();
        this.groupCacheKey.fill(-1);
        this.groupStart = new Int32Array(1);
      }
    }
    const limit = src.idLimit;
    if (this.built >= limit) return;
    this.types = grown(this.types, limit, (n) => new Uint8Array(n));
    this.groupOf = grown(this.groupOf, limit, (n) => new Int32Array(n));
    this.days = grown(this.days, limit, (n) => new Int32Array(n));
    this.updated = grown(this.updated, limit, (n) => new Float64Array(n));
    this.tagStart = grown(this.tagStart, limit + 1, (n) => new Int32Array(n));
    let at = this.tagStart[this.built];
    // Room for two tags a document at once: doubled in the loop, a copy of millions of codes
    // (and the page faults of the new array) fell in one step.
    this.tagCodes = grown(this.tagCodes, at + 2 * (limit - this.built), (n) => new Int32Array(n));
    for (let d = this.built; d < limit; d++) {
      const row = src.rowOf(d);
      if (row < 0) {
        this.types[d] = NO_TYPE;
        this.days[d] = 0;
        this.updated[d] = 0;
      } else {
        const a = src.attributes;
        this.types[d] = a.types[row];
        this.days[d] = a.days[row];
        this.updated[d] = a.updated[row];
        const s = a.tagStart[row];
        const e = a.tagEnd[row];
        this.tagCodes = grown(this.tagCodes, at + e - s, (n) => new Int32Array(n));
        for (let i = s; i < e; i++) this.tagCodes[at++] = a.tags[i];
      }
      this.tagStart[d + 1] = at;
      this.groupOf[d] = this.groupOfDoc(this.types[d], this.tagStart[d], at);
      this.built = d + 1;
      if ((d + 1) % STEP_DOCS === 0) yield;
    }
    this.generation += 1;
  }

  /** The facet group of a document of type code `type` and tag codes `tagCodes[from … to - 1]` (sorted here), entered if new. */
  private groupOfDoc(type: number, from: number, to: number): number {
    const codes = this.tagCodes;
    // Insertion sort: a document holds a few tags.
    for (let i = from + 1; i < to; i++) {
      const c = codes[i];
      let j = i - 1;
      for (; j >= from && codes[j] > c; j--) codes[j + 1] = codes[j];
      codes[j + 1] = c;
    }
    // A few tags of codes below 511 keyed by an integer below 2^30 (the type's code in
    // `TYPE_BITS` bits, 9 bits a tag), looked up in a direct-mapped cache before the map: a 1M
    // rebuild made a string and a map look-up per document, ~200 ms; others by a string.
    const t = type === NO_TYPE ? ITEM_TYPES.length : type;
    let key: number | string = t;
    const small = TYPE_BITS + 9 * (to - from) <= 30 && (to === from || codes[to - 1] < 511);
    if (small) for (let i = from, m = 1 << TYPE_BITS; i < to; i++, m *= 512) key += m * (codes[i] + 1);
    else for (let i = from; i < to; i++) key = `${key},${codes[i]}`;
    const slot = small ? Math.imul(key as number, 0x9e3779b1) >>> (32 - GROUP_CACHE_BITS) : -1;
    if (slot >= 0 && this.groupCacheKey[slot] === key) return this.groupCacheGroup[slot];
    let g = this.groupKey.get(key);
    if (g === undefined) g = this.enterGroup(key, type, from, to);
    if (slot >= 0) {
      this.groupCacheKey[slot] = key as number;
      this.groupCacheGroup[slot] = g;
    }
    return g;
  }

  /** Enters a new facet group under `key`: type code `type`, the tag codes `tagCodes[from … to - 1]`. */
  private enterGroup(key: number | string, type: number, from: number, to: number): number {
    const codes = this.tagCodes;
    const g = this.groupKey.size;
    this.groupKey.set(key, g);
    this.groupType = grown(this.groupType, g + 1, (n) => new Uint8Array(n));
    this.groupStart = grown(this.groupStart, g + 2, (n) => new Int32Array(n));
    const at = this.groupStart[g];
    this.groupTags = grown(this.groupTags, at + to - from, (n) => new Int32Array(n));
    this.groupTags.set(codes.subarray(from, to), at);
    this.groupType[g] = type;
    this.groupStart[g + 1] = at + to - from;
    return g;
  }

  /** The documents' facet groups (their type and tags), as entered by `update`. */
  groups(): FacetGroups {
    return {
      of: this.groupOf,
      count: this.groupKey.size,
      type: this.groupType,
      start: this.groupStart,
      tags: this.groupTags,
    };
  }

  /**
   * The entered documents' facet groups counted per block of documents (`GroupBlocks`), brought
   * up to the documents entered since the last call (a pass over those only; all of them after a
   * renumbering: ~1M array reads at 1M documents): a facet tally of a match set that holds most of
   * a block counts the documents it lacks and takes them from the block's counts (`FacetTally`).
   * Undefined when the groups outnumber a quarter of a block's documents: adding a block's counts
   * would then cost about what counting the documents does.
   */
  groupBlocks(): GroupBlocks | undefined {
    return atOnce(this.countingBlocks());
  }

  /**
   * `groupBlocks` a step at a time, `COUNT_STEP_DOCS` documents a step: all 1M documents in one
   * step, the first faceted query's after a merge, was one of its longest turns.
   */
  *countingBlocks(): Generator<void, GroupBlocks | undefined> {
    const size = this.blockDocs;
    const groups = this.groupKey.size;
    if (groups > size / 4) return undefined;
    const of = this.groupOf;
    for (let d = this.blocksBuilt; d < this.built;) {
      const b = Math.floor(d / size);
      const end = Math.min(this.built, (b + 1) * size, d + COUNT_STEP_DOCS);
      const counts = (this.blockCounts[b] = grown(
        this.blockCounts[b] ?? new Int32Array(0),
        groups,
        (n) => new Int32Array(n),
      ));
      for (; d < end; d++) counts[of[d]] += 1;
      this.blocksBuilt = d;
      if (d < this.built) yield;
    }
    return { size, counts: this.blockCounts };
  }

  /** A zeroed array of a count per facet group, reused: its user leaves it zeroed. */
  groupCounts(): Int32Array {
    if (this.groupScratch.length < this.groupKey.size)
      this.groupScratch = new Int32Array(Math.max(this.groupKey.size, this.groupScratch.length * 2));
    return this.groupScratch;
  }
  private groupScratch = new Int32Array(0);

  /** Per type code, the bitmap of the documents of that type (made once per generation). */
  typeBitmaps(): Int32Array[] {
    return atOnce(this.makingTypeBitmaps());
  }

  /**
   * `typeBitmaps` a step at a time, `COUNT_STEP_DOCS` documents a step: one build per generation,
   * which whoever asks next continues (a browse, the background preparation: `EmbeddedIndex`).
   */
  *makingTypeBitmaps(): Generator<void, Int32Array[]> {
    if (this.typeBitsAt === this.generation && this.typeBits) return this.typeBits;
    return yield* this.typeBitsBuild.run(this.generation, () => this.buildTypeBitmaps());
  }
  private *buildTypeBitmaps(): Generator<void, Int32Array[]> {
    const { built, types, generation } = this;
    const words = (built + 31) >>> 5;
    const out = ITEM_TYPES.map(() => new Int32Array(words));
    for (let d = 0; d < built; d++) {
      const c = types[d];
      if (c < out.length) out[c][d >>> 5] |= 1 << (d & 31);
      if ((d + 1) % COUNT_STEP_DOCS === 0 && d + 1 < built) yield;
    }
    this.typeBits = out;
    this.typeBitsAt = generation;
    return out;
  }
  private typeBits: Int32Array[] | undefined;
  private typeBitsAt = -1;
  private readonly typeBitsBuild = new SharedBuild<Int32Array[]>();

  /** Tag names by code (lower-cased). */
  get tagNames(): readonly string[] {
    return this.tags.names;
  }

  /** Tag codes in the dictionary (`tagNames.length`). */
  get tagCount(): number {
    return this.tags.size;
  }

  /**
   * `f` compiled against the columns as they are now (tags not in the dictionary match nothing),
   * with the bitmap of the documents passing it: made in one pass over the columns (about 1 ms
   * per 200,000 documents) and kept for the generation, the last few filters, so that a filtered
   * query's count costs what an unfiltered one's does.
   */
  compile(f: ItemFilter | undefined): CompiledFilter {
    return atOnce(this.compiling(f));
  }

  /**
   * `compile` a step at a time: the pass over the documents that makes a filter's bitmaps is
   * 12–50 ms at 1M (a new one after every write, which starts a generation), `COMPILE_STEP_DOCS`
   * documents a step.
   */
  *compiling(f: ItemFilter | undefined): Generator<void, CompiledFilter> {
    if (this.compiledAt !== this.generation) {
      this.compiled.clear();
      this.compiledAt = this.generation;
    }
    const key = JSON.stringify(normalFilter(f));
    const hit = this.compiled.get(key);
    if (hit) {
      this.compiled.delete(key);
      this.compiled.set(key, hit);
      return hit;
    }
    const made = yield* this.make(f);
    if (this.compiled.size >= KEPT_FILTERS) this.compiled.delete(this.compiled.keys().next().value!);
    this.compiled.set(key, made);
    return made;
  }

  private *make(f: ItemFilter | undefined): Generator<void, CompiledFilter> {
    const { types, days, tagStart, tagCodes } = this;
    let mask = 0;
    for (const t of f?.type ?? []) mask |= 1 << (TYPE_CODE.get(t) ?? 31);
    let wanted: Uint8Array | undefined;
    if (f?.tag?.length) {
      wanted = new Uint8Array(this.tagCount);
      for (const t of f.tag) {
        const c = this.tags.find(t);
        if (c !== undefined) wanted[c] = 1;
      }
    }
    const from = f?.date_from !== undefined ? dayNumber(f.date_from) : -Infinity;
    const to = f?.date_to !== undefined ? dayNumber(f.date_to) : Infinity;
    const dated = f?.date_from !== undefined || f?.date_to !== undefined;
    const typeCode = mask === 0 ? () => true : (c: number) => ((mask >>> c) & 1) === 1 && c < 31;
    const type = mask === 0 ? () => true : (doc: number) => typeCode(types[doc]);
    const w = wanted;
    const tagList = !w
      ? () => true
      : (codes: Int32Array, s: number, e: number) => {
          for (let i = s; i < e; i++) if (w[codes[i]] === 1) return true;
          return false;
        };
    const tag = !w ? () => true : (doc: number) => tagList(tagCodes, tagStart[doc], tagStart[doc + 1]);
    const date = !dated ? () => true : (doc: number) => days[doc] >= from && days[doc] <= to;
    const empty = mask === 0 && !w && !dated;
    const parts = { type, tag, date, typeCode, tagList };
    if (empty) return { empty, ...parts, all: () => true, bits: {}, kept: this.built };
    const words = (this.built + 31) >>> 5;
    const bits = new Int32Array(words);
    let kept = 0;
    const tb = mask !== 0 ? new Int32Array(words) : undefined;
    const gb = w ? new Int32Array(words) : undefined;
    const db = dated ? new Int32Array(words) : undefined;
    for (let d = 0; d < this.built; d++) {
      const bit = 1 << (d & 31);
      const at = d >>> 5;
      const t = type(d);
      const g = tag(d);
      const x = date(d);
      if (tb && t) tb[at] |= bit;
      if (gb && g) gb[at] |= bit;
      if (db && x) db[at] |= bit;
      if (t && g && x) {
        bits[at] |= bit;
        kept += 1;
      }
      if ((d + 1) % COMPILE_STEP_DOCS === 0) yield;
    }
    const all = Object.assign((doc: number) => ((bits[doc >>> 5] >>> (doc & 31)) & 1) === 1, { bits });
    return { empty, ...parts, all, bits: { type: tb, tag: gb, date: db }, kept };
  }
}

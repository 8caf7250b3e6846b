/**
 * Tag names (lower-cased) and their integer codes: entered as documents are indexed
 * (`DocAttributeTable`) and read by the columns (`DocColumns`), which copy a document's codes
 * instead of looking its tags up. A name keeps its code for the dictionary's life (one per
 * `IndexLifecycle`, across rebuilds, as the columns kept theirs); codes only grow.
 */
export class TagDictionary {
  /** Names by code. */
  readonly names: string[] = [];
  private readonly codes = new Map<string, number>();

  /** The code of `name` (lower-cased), entered if new. */
  codeOf(name: string): number {
    let c = this.codes.get(name);
    if (c !== undefined) return c;
    const lower = name.toLowerCase();
    c = this.codes.get(lower);
    if (c === undefined) {
      c = this.names.length;
      this.names.push(lower);
      this.codes.set(lower, c);
    }
    return c;
  }

  /** The code of `name` (lower-cased), undefined when no document was entered with it. */
  find(name: string): number | undefined {
    return this.codes.get(name.toLowerCase());
  }

  /** Codes entered: every code is below this. */
  get size(): number {
    return this.names.length;
  }
}

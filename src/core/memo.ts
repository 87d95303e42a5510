/**
 * A bounded memo keyed by a tuple of primitive values (the fields a result depends on), for the
 * evaluation's hot paths: the CVE matcher, the risk rules and the CVE findings remember what they
 * computed for each distinct port description, and a network repeats the same few hundred.
 *
 * Why not a Map keyed by one string built from the fields: that string is new for every lookup, so
 * V8 must concatenate, flatten and hash it every time (about a fifth of matchCves' and assessRisk's
 * time on the 100,000 ports of bench/evaluate-bench.mjs, three to six times what these lookups
 * cost). Here each field is looked up in its own level of nested Maps: a field is usually a string
 * the caller already holds (the dataset's, or the scan's), whose hash V8 keeps once computed, and a
 * lookup allocates nothing. Keys compare with SameValueZero, as Map keys do: `null`, `undefined` and ''
 * are different keys (callers normalise with `?? ''` where the result does not tell them apart).
 *
 * Keys may have different lengths: the value sits under its own symbol at the end of its path,
 * so a key that is a prefix of another does not collide with it.
 */
export type MemoKeyPart = string | number | boolean | null | undefined;

type Node = Map<unknown, unknown>;

const VALUE = Symbol('value');

export class TupleMemo<V> {
  private root: Node = new Map();
  private count = 0;

  /** `limit`: entries remembered before the memo starts over (bounds memory on unusual networks). */
  constructor(private readonly limit: number) {}

  /** Entries remembered. */
  get size(): number {
    return this.count;
  }

  get(key: readonly MemoKeyPart[]): V | undefined {
    let node: Node | undefined = this.root;
    for (let i = 0; i < key.length; i++) {
      node = node.get(key[i]) as Node | undefined;
      if (node === undefined) return undefined;
    }
    return node.get(VALUE) as V | undefined;
  }

  set(key: readonly MemoKeyPart[], value: V): void {
    if (this.count >= this.limit) this.clear();
    let node = this.root;
    for (let i = 0; i < key.length; i++) {
      let next = node.get(key[i]) as Node | undefined;
      if (next === undefined) node.set(key[i], (next = new Map()));
      node = next;
    }
    if (!node.has(VALUE)) this.count++;
    node.set(VALUE, value);
  }

  clear(): void {
    this.root = new Map();
    this.count = 0;
  }
}

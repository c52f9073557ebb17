/**
 * Screens made for documents the file store's table keeps none for. The log's frames carry no
 * screens (145 bytes a document on disk, twice over, were past #51's 700 B/doc): the table gets a
 * document's screen from its put and keeps it in every checkpoint, so only documents folded from
 * the log at open (after a crash, or with no usable checkpoint) come without one. Such a candidate
 * is read as before, and the lookup that read it makes its screen from the set verification reads
 * (`CandidateScreen.screenOf`): kept here and screened with at once, and put into the table at the
 * store's next write, which the next checkpoint then keeps.
 * @module
 */
import { StoreFullError } from '../errors.js';
import type { LogReplica } from '../log/replica.js';
import { LOCATOR_BYTES, screenIn, tableRecord, placeOf } from './replay.js';

/** Screens held at most before the next write puts them in the table (more are not made until then). */
const MOST_PENDING = 1 << 18;

/** Whether table records `a` and `b` point at the same record (the same version of a document, not moved since). */
function samePlace(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < LOCATOR_BYTES; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Screens waiting to go into the table, by document id, each with the locator it was made for. */
export class ScreenHeals {
  private readonly pending = new Map<string, { loc: Uint8Array; screen: Uint8Array }>();
  /** Screens put into the table since open. */
  healed = 0;

  /** How many wait. */
  get size(): number {
    return this.pending.size;
  }

  /** Whether a screen for the document with table record `record` is wanted: it has none, kept or waiting, and there is room. */
  wants(id: string, record: Uint8Array): boolean {
    if (record.length !== LOCATOR_BYTES || this.pending.size >= MOST_PENDING) return false;
    const p = this.pending.get(id);
    return !(p && samePlace(p.loc, record));
  }

  /** The screen of table record `record` of document `id`: its own, or one waiting for it (undefined: none). */
  screenFor(id: string, record: Uint8Array): Uint8Array | undefined {
    const own = screenIn(record);
    if (own.length > 0) return own;
    const p = this.pending.get(id);
    return p && samePlace(p.loc, record) ? p.screen : undefined;
  }

  /** Keeps `screen` for document `id`, whose table record is `record` now. */
  add(id: string, record: Uint8Array, screen: Uint8Array): void {
    this.pending.set(id, { loc: record.slice(0, LOCATOR_BYTES), screen });
  }

  /**
   * Puts the waiting screens into `replica`'s table (inside a write: nothing else changes it
   * meanwhile), each only where its document still has the record it was made for and no screen;
   * returns how many went in. One the table has no room for is dropped; any other failure throws,
   * the screens not yet put in dropped with it.
   */
  apply(replica: LogReplica): number {
    let n = 0;
    const pending = [...this.pending];
    this.pending.clear();
    for (const [id, p] of pending) {
      try {
        const done = replica.table.rewriteRecord(id, (current) => {
          if (current.length !== LOCATOR_BYTES || !samePlace(p.loc, current)) return undefined;
          const { at, len } = placeOf(current);
          return tableRecord(at, len, p.screen);
        });
        if (done) n++;
      } catch (e) {
        // No room in the table's arena: the document goes on without a screen, read as before.
        if (!(e instanceof StoreFullError)) throw e;
      }
    }
    this.healed += n;
    return n;
  }
}

/**
 * The flavors and images server creates resolve, kept between creates while the API DB's
 * catalogue notifications are heard (a create then costs one PostgreSQL round trip less).
 */
import { getFlavorAndImage, type Flavor, type Image, type Queryable } from '@cellsched/api-db';

/** What a create resolves first: its flavor (with the projects given access to it) and its image, each undefined when not found. */
export interface FlavorAndImage {
  readonly flavor: Flavor | undefined;
  readonly flavorAccess: readonly string[];
  readonly image: Image | undefined;
}

/** The longest flavor id the API accepts (Nova's: 255); a longer one is still found, only not kept. */
const MAX_FLAVORID = 255;
/** An image id is a uuid (36 characters); anything longer is never found. */
const MAX_IMAGE_ID = 36;

/** Reads a create's flavor and image (the API DB, or a copy of it). */
export interface CatalogueReader {
  getFlavorAndImage(flavorid: string, imageId: string): Promise<FlavorAndImage>;
}

/** Options of {@link CatalogueCache}. */
export interface CatalogueCacheOptions {
  readonly db: Queryable;
  /** Most (flavor, image) pairs kept; the copy starts over when full (default 1,000). */
  readonly maxEntries?: number;
}

/**
 * `getFlavorAndImage` answers, kept per (flavorRef, imageRef) — not-found answers too — while
 * `listening` (the API DB's catalogue channel is heard), all forgotten at every change
 * (`invalidate`: a notification, or a write through this process). Not listening (starting, or
 * the listening session lost: a commit meanwhile is never notified), every call reads the
 * database. NOTE: a read that began before a change is not kept (generation check): it may hold
 * what the change replaced. What a create sees is therefore never older than the last commit
 * whose notification has not reached this process yet, as with a read racing that commit.
 */
export class CatalogueCache implements CatalogueReader {
  private readonly entries = new Map<string, FlavorAndImage>();
  private generation = 0;
  private heard = false;
  readonly stats = { hits: 0, reads: 0 };

  constructor(private readonly opts: CatalogueCacheOptions) {}

  async getFlavorAndImage(flavorid: string, imageId: string): Promise<FlavorAndImage> {
    // NOTE: refs longer than any flavor id (255) or image id (a uuid) are read, never kept: a
    // client's arbitrary strings must not fill the copy (not-found answers are kept too)
    const keepable = flavorid.length <= MAX_FLAVORID && imageId.length <= MAX_IMAGE_ID;
    const key = `${flavorid}\u0000${imageId}`;
    const kept = this.heard && keepable ? this.entries.get(key) : undefined;
    if (kept !== undefined) {
      this.stats.hits += 1;
      return kept;
    }
    const generation = this.generation;
    this.stats.reads += 1;
    const read = await getFlavorAndImage(this.opts.db, flavorid, imageId);
    if (this.heard && keepable && generation === this.generation) {
      if (this.entries.size >= (this.opts.maxEntries ?? 1000)) this.entries.clear();
      this.entries.set(key, read);
    }
    return read;
  }

  /** Something in the catalogue changed (or may have): nothing kept is answered again. */
  invalidate(): void {
    this.generation += 1;
    this.entries.clear();
  }

  /** Whether changes are heard now; any change of it forgets everything kept. */
  setListening(listening: boolean): void {
    this.heard = listening;
    this.invalidate();
  }
}

/** The database itself, read on every call (no copy). */
export function uncachedCatalogue(db: Queryable): CatalogueReader {
  return { getFlavorAndImage: (flavorid, imageId) => getFlavorAndImage(db, flavorid, imageId) };
}

// Server creates resolve their flavor and image from the API's kept copy (CatalogueCache) while
// the API DB's catalogue notifications are heard, against real PostgreSQL and RabbitMQ.
import { createFlavor, createImage, deleteImage, getFlavorAndImage, setFlavorExtraSpecs, type Queryable } from '@cellsched/api-db';
import { CatalogueCache } from '../../src/adapters/catalogue-cache';
import { as, IMAGE, startHarness, waitFor, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('catalogue');
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const ADMIN = as('admin', '2.1');

async function createServer(
  flavorRef: string,
  imageRef = IMAGE,
  token = 'alice:p1',
): Promise<{ status: number; message?: string; id?: string }> {
  const res = await h.inject({
    method: 'POST',
    url: '/v2.1/servers',
    headers: as(token),
    payload: { server: { name: 'vm', imageRef, flavorRef } },
  });
  const body = res.json() as { server?: { id: string }; badRequest?: { message: string } };
  return { status: res.statusCode, message: body.badRequest?.message, id: body.server?.id };
}

/** POST /flavors as the admin (64 MiB, 1 vCPU, no disk); 200 expected. */
async function makeFlavor(id: string, name: string, extra: Record<string, unknown> = {}): Promise<void> {
  const made = await h.inject({
    method: 'POST',
    url: '/v2.1/flavors',
    headers: ADMIN,
    payload: { flavor: { name, id, ram: 64, vcpus: 1, disk: 0, ...extra } },
  });
  expect(made.statusCode).toBe(200);
}

function cache(): CatalogueCache {
  const c = h.deps.catalogue;
  if (c === undefined) throw new Error('the harness has no catalogue cache');
  return c;
}

describe('creates and the flavors and images they resolve', () => {
  test('resolved once while heard; a flavor deleted through the API is refused by the very next create', async () => {
    await makeFlavor('cat-1', 'cat.small');
    // NOTE: the flavor's own notification, heard after the first create's read, would forget it
    await h.catalogueHeard();
    const before = { ...cache().stats };
    expect((await createServer('cat-1')).status).toBe(202);
    expect((await createServer('cat-1')).status).toBe(202);
    expect((await createServer('cat-1')).status).toBe(202);
    expect(cache().stats.reads - before.reads).toBe(1);
    expect(cache().stats.hits - before.hits).toBe(2);

    expect((await h.inject({ method: 'DELETE', url: '/v2.1/flavors/cat-1', headers: ADMIN })).statusCode).toBe(202);
    expect(await createServer('cat-1')).toMatchObject({ status: 400, message: 'Invalid flavorRef provided.' });
    // not found is kept too, until the flavor exists
    expect(await createServer('cat-1')).toMatchObject({ status: 400, message: 'Invalid flavorRef provided.' });
    await makeFlavor('cat-1', 'cat.again');
    expect((await createServer('cat-1')).status).toBe(202);
  });

  test("a private flavor: refused to a project without access (Nova's 400), usable at once when access is given through the API, refused at once when it is taken away; the admin may always use it", async () => {
    await makeFlavor('cat-p', 'cat.private', { 'os-flavor-access:is_public': false });
    const access = (action: string) =>
      h.inject({ method: 'POST', url: '/v2.1/flavors/cat-p/action', headers: ADMIN, payload: { [action]: { tenant: 'p1' } } });
    expect(await createServer('cat-p')).toMatchObject({ status: 400, message: 'Invalid flavorRef provided.' });
    expect((await createServer('cat-p', IMAGE, 'admin')).status).toBe(202);
    expect((await access('addTenantAccess')).statusCode).toBe(200);
    expect((await createServer('cat-p')).status).toBe(202);
    expect(await createServer('cat-p', IMAGE, 'bob:p2')).toMatchObject({ status: 400, message: 'Invalid flavorRef provided.' });
    expect((await access('removeTenantAccess')).statusCode).toBe(200);
    expect(await createServer('cat-p')).toMatchObject({ status: 400, message: 'Invalid flavorRef provided.' });
  });

  test('a change by another writer (straight in the database, as nova-manage) reaches creates once its notification arrives', async () => {
    await createFlavor(h.apiDb.pool, { name: 'cat.other', flavorid: 'cat-2', vcpus: 1, memoryMb: 64 });
    await waitFor('the new flavor', async () => ((await createServer('cat-2')).status === 202 ? true : undefined));
    const image = (await createImage(h.apiDb.pool, { name: 'cat-image' })).image;
    await waitFor('the new image', async () => ((await createServer('cat-2', image.id)).status === 202 ? true : undefined));
    // NOTE: a spec's JSON omits an empty extraSpecs map: absent until the change is heard.
    const spec = async (id: string): Promise<Record<string, string>> => {
      const rows = await h.apiDb.pool.query<{ spec: { flavor: { extraSpecs?: Record<string, string> } } }>(
        'SELECT spec FROM request_specs WHERE instance_uuid = $1',
        [id],
      );
      return rows.rows[0]?.spec.flavor.extraSpecs ?? {};
    };
    await setFlavorExtraSpecs(h.apiDb.pool, 'cat-2', { 'trait:CUSTOM_CATALOGUE': 'required' });
    await waitFor('the new extra spec in the request spec', async () => {
      const { id } = await createServer('cat-2', image.id);
      return id !== undefined && 'trait:CUSTOM_CATALOGUE' in (await spec(id)) ? true : undefined;
    });
    await deleteImage(h.apiDb.pool, image.id);
    await waitFor('the image gone', async () => ((await createServer('cat-2', image.id)).status === 400 ? true : undefined));
    expect(await createServer('cat-2', image.id)).toMatchObject({ status: 400, message: `Image ${image.id} could not be found.` });
  });
});

describe('CatalogueCache', () => {
  test('not listening, every call reads the database; listening, answers are kept until invalidated', async () => {
    const c = new CatalogueCache({ db: h.apiDb.pool, maxEntries: 2 });
    await c.getFlavorAndImage('1', IMAGE);
    await c.getFlavorAndImage('1', IMAGE);
    expect(c.stats).toEqual({ hits: 0, reads: 2 });
    c.setListening(true);
    const first = await c.getFlavorAndImage('1', IMAGE);
    expect(first.flavor?.flavorid).toBe('1');
    expect(first.image?.id).toBe(IMAGE);
    expect(await c.getFlavorAndImage('1', IMAGE)).toBe(first);
    expect(await c.getFlavorAndImage('nope', IMAGE)).toMatchObject({ flavor: undefined });
    expect(await c.getFlavorAndImage('nope', IMAGE)).toMatchObject({ flavor: undefined });
    expect(c.stats).toEqual({ hits: 2, reads: 4 });
    c.invalidate();
    expect(await c.getFlavorAndImage('1', IMAGE)).toEqual(first);
    expect(c.stats.reads).toBe(5);
    // full (2 entries): starts over
    await c.getFlavorAndImage('nope', IMAGE);
    await c.getFlavorAndImage('1', 'not-a-uuid');
    await c.getFlavorAndImage('1', IMAGE);
    expect(c.stats.reads).toBe(8);
    c.setListening(false);
    await c.getFlavorAndImage('1', IMAGE);
    expect(c.stats.reads).toBe(9);
    // a ref longer than any flavor or image id is read every time, never kept
    c.setListening(true);
    const long = 'x'.repeat(256);
    expect(await c.getFlavorAndImage(long, IMAGE)).toMatchObject({ flavor: undefined });
    expect(await c.getFlavorAndImage(long, IMAGE)).toMatchObject({ flavor: undefined });
    expect(await c.getFlavorAndImage('1', `${IMAGE}-and-more`)).toMatchObject({ image: undefined });
    expect(await c.getFlavorAndImage('1', `${IMAGE}-and-more`)).toMatchObject({ image: undefined });
    expect(c.stats).toMatchObject({ hits: 2, reads: 13 });
  });

  test('a read that began before a change is answered but not kept (it may hold what the change replaced)', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let held = true;
    const slow: Queryable = {
      query: (async (text: string, values?: unknown[]) => {
        const r = await h.apiDb.pool.query(text, values);
        if (held) await gate;
        return r;
      }) as Queryable['query'],
    };
    const c = new CatalogueCache({ db: slow });
    c.setListening(true);
    const pending = c.getFlavorAndImage('1', IMAGE);
    await new Promise((r) => setTimeout(r, 50));
    c.invalidate();
    held = false;
    release();
    expect((await pending).flavor?.flavorid).toBe('1');
    await c.getFlavorAndImage('1', IMAGE);
    expect(c.stats).toEqual({ hits: 0, reads: 2 });
    await c.getFlavorAndImage('1', IMAGE);
    expect(c.stats).toEqual({ hits: 1, reads: 2 });
    expect(await getFlavorAndImage(h.apiDb.pool, '1', IMAGE)).toEqual(await c.getFlavorAndImage('1', IMAGE));
  });
});

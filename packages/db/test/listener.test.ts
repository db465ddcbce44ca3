import { ChangeListener, createTestDatabase, type ListenerState, type TestDatabase } from '@cellsched/db';
import { Client } from 'pg';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'db_listener' });
});
afterAll(async () => {
  await db.drop();
});

async function waitFor(what: string, probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function notify(channel: string, payload: string, inTransaction?: (c: Client) => Promise<void>): Promise<void> {
  const c = new Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query('BEGIN');
    await c.query('SELECT pg_notify($1, $2)', [channel, payload]);
    await inTransaction?.(c);
    await c.query('COMMIT');
  } finally {
    await c.end();
  }
}

describe('ChangeListener', () => {
  test('hears commits on its channel only, not before they commit; comes back listening after its session is terminated', async () => {
    const heard: string[] = [];
    const states: ListenerState[] = [];
    const l = new ChangeListener({
      url: db.url,
      channel: 'test_changes',
      applicationName: 'listener-test',
      onNotify: (p) => heard.push(p),
      onState: (s) => states.push(s),
      minBackoffMs: 10,
    });
    l.start();
    try {
      await waitFor('listening', () => l.listening);
      expect(states).toEqual(['listening']);
      await notify('test_changes', 'one', async () => {
        // NOTE: a notification is delivered at commit, never before
        await new Promise((r) => setTimeout(r, 100));
        expect(heard).toEqual([]);
      });
      await notify('other_channel', 'not mine');
      await notify('test_changes', 'two');
      await waitFor('two notifications', () => heard.length >= 2);
      expect(heard).toEqual(['one', 'two']);

      const admin = new Client({ connectionString: db.url });
      await admin.connect();
      try {
        const killed = await admin.query(
          "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'listener-test' AND datname = current_database()",
        );
        expect(killed.rows).toEqual([{ ok: true }]);
      } finally {
        await admin.end();
      }
      await waitFor('down', () => states.includes('down'));
      await waitFor('listening again', () => l.listening);
      expect(states).toEqual(['listening', 'down', 'listening']);
      await notify('test_changes', 'three');
      await waitFor('the third', () => heard.length >= 3);
      expect(heard).toEqual(['one', 'two', 'three']);
    } finally {
      await l.close();
    }
    expect(l.listening).toBe(false);
    await notify('test_changes', 'after close');
    await new Promise((r) => setTimeout(r, 100));
    expect(heard).toEqual(['one', 'two', 'three']);
  });

  test('a server that does not answer is retried with backoff, told as down each time, and close stops the retries', async () => {
    const states: ListenerState[] = [];
    const url = new URL(db.url);
    url.port = '1'; // nothing listens there
    const l = new ChangeListener({
      url: url.toString(),
      channel: 'test_changes',
      onNotify: () => undefined,
      onState: (s) => states.push(s),
      minBackoffMs: 10,
      maxBackoffMs: 20,
    });
    l.start();
    await waitFor('three failed attempts', () => states.length >= 3);
    expect(new Set(states)).toEqual(new Set(['down']));
    expect(l.listening).toBe(false);
    await l.close();
    const after = states.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(states.length).toBe(after);
  });

  test('bad options are refused before anything connects', () => {
    expect(() => new ChangeListener({ url: 'not a url', channel: 'x', onNotify: () => undefined })).toThrow(TypeError);
    expect(() => new ChangeListener({ url: db.url, channel: 'drop table; --', onNotify: () => undefined })).toThrow(
      /not a plain identifier/,
    );
  });
});

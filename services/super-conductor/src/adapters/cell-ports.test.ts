import { BUS_ERROR, BusError } from '@cellsched/bus';
import { isTransient } from '@cellsched/transient-retry';
import { castTo } from './cell-ports';

const fails = (err: unknown) => () => Promise.reject(err);

test('a cast nobody serves is unroutable; a sent one is sent', async () => {
  expect(await castTo(() => Promise.resolve())).toBe('sent');
  expect(await castTo(fails(new BusError(BUS_ERROR.publishUnroutable, 'no queue is bound', false)))).toBe('unroutable');
});

test('a cell bus refusing our user (permissions revoked: the cell cut off) is retried, not dead-lettered', async () => {
  for (const code of [BUS_ERROR.publishRefused, BUS_ERROR.accessRefused]) {
    const err = await castTo(fails(new BusError(code, '403 (ACCESS-REFUSED)', false))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusError);
    expect(err).toMatchObject({ code, retryable: true });
    expect(isTransient(err)).toBe(true);
  }
});

test('other failures are thrown as they are', async () => {
  const bug = new TypeError('bug');
  await expect(castTo(fails(bug))).rejects.toBe(bug);
  const nacked = new BusError(BUS_ERROR.publishNacked, 'nacked', true);
  await expect(castTo(fails(nacked))).rejects.toBe(nacked);
});

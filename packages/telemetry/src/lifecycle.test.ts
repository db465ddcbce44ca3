import { EventEmitter } from 'node:events';
import pino from 'pino';
import { stopOnSignal } from './lifecycle';

function fakeProcess() {
  const emitter = new EventEmitter();
  const exits: number[] = [];
  let exited!: () => void;
  const done = new Promise<void>((r) => {
    exited = r;
  });
  const target = {
    once: (signal: 'SIGTERM' | 'SIGINT', listener: () => void) => emitter.once(signal, listener),
    exit: (code: number) => {
      exits.push(code);
      exited();
    },
  };
  return { emitter, exits, done, target };
}

const log = pino({ level: 'silent' });

describe('stopOnSignal', () => {
  it.each(['SIGTERM', 'SIGINT'])('on %s closes, then flushes telemetry, then exits 0', async (signal) => {
    const p = fakeProcess();
    const order: string[] = [];
    stopOnSignal(
      log,
      async () => {
        order.push('close');
      },
      {
        target: p.target,
        shutdown: async () => {
          order.push('telemetry');
        },
      },
    );
    p.emitter.emit(signal);
    await p.done;
    expect(order).toEqual(['close', 'telemetry']);
    expect(p.exits).toEqual([0]);
  });

  it('still flushes telemetry and exits 1 when closing throws', async () => {
    const p = fakeProcess();
    let flushed = false;
    stopOnSignal(
      log,
      async () => {
        throw new Error('bus close failed');
      },
      {
        target: p.target,
        shutdown: async () => {
          flushed = true;
        },
      },
    );
    p.emitter.emit('SIGTERM');
    await p.done;
    expect(flushed).toBe(true);
    expect(p.exits).toEqual([1]);
  });

  it('closes once when both signals arrive', async () => {
    const p = fakeProcess();
    let closes = 0;
    stopOnSignal(
      log,
      async () => {
        closes += 1;
        await new Promise((r) => setTimeout(r, 20));
      },
      { target: p.target, shutdown: async () => undefined },
    );
    p.emitter.emit('SIGTERM');
    p.emitter.emit('SIGINT');
    await p.done;
    expect(closes).toBe(1);
    expect(p.exits).toEqual([0]);
  });
});

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { JsonlFileSpanExporter } from './jsonl-span-exporter';
import { spansFromRequest } from './trace-tail/otlp-json';

describe('JsonlFileSpanExporter', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cellsched-jsonl-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('with flushMs 0, appends one OTLP ExportTraceServiceRequest per export as it comes, creating the directory', async () => {
    const file = join(dir, 'nested', 'spans.jsonl');
    const exporter = new JsonlFileSpanExporter(file, undefined, 0);
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'placement', 'host.name': 'p-1' }),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const tracer = provider.getTracer('test');
    const parent = tracer.startSpan('claim');
    parent.setAttribute('cellsched.instance_uuid', 'u-1');
    parent.end();
    tracer.startSpan('audit').end();
    await provider.forceFlush();
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.filter(Boolean)).toHaveLength(2);
    const spans = lines.filter(Boolean).flatMap((l) => spansFromRequest(JSON.parse(l)));
    expect(spans.map((s) => [s.name, s.service, s.host])).toEqual([
      ['claim', 'placement', 'p-1'],
      ['audit', 'placement', 'p-1'],
    ]);
    expect(spans[0]?.attributes).toEqual({ 'cellsched.instance_uuid': 'u-1' });
    await provider.shutdown();
    const result = await new Promise((resolve) => exporter.export([], resolve));
    expect(result).toMatchObject({ code: 1 });
  });

  const providerOf = (exporter: JsonlFileSpanExporter) =>
    new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'scheduler', 'host.name': 's-1' }),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
  const lines = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

  it('writes the spans that end within flushMs together, as one line, after flushMs', async () => {
    const file = join(dir, 'spans.jsonl');
    const provider = providerOf(new JsonlFileSpanExporter(file, undefined, 50));
    const tracer = provider.getTracer('test');
    for (const name of ['a', 'b', 'c']) tracer.startSpan(name).end();
    expect(lines(file)).toEqual([]);
    const t0 = Date.now();
    while (lines(file).length === 0 && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 10));
    expect(lines(file)).toHaveLength(1);
    expect(spansFromRequest(JSON.parse(lines(file)[0] ?? '')).map((s) => [s.name, s.service])).toEqual([
      ['a', 'scheduler'],
      ['b', 'scheduler'],
      ['c', 'scheduler'],
    ]);
    tracer.startSpan('d').end();
    await provider.shutdown(); // writes what is buffered, then refuses
    expect(lines(file).map((l) => spansFromRequest(JSON.parse(l)).map((s) => s.name))).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('writes what is buffered synchronously on forceFlush and at process exit, and no longer listens for exit once shut down', async () => {
    const file = join(dir, 'spans.jsonl');
    const before = process.listeners('exit');
    const exporter = new JsonlFileSpanExporter(file, undefined, 60_000);
    const added = process.listeners('exit').filter((l) => !before.includes(l));
    expect(added).toHaveLength(1);
    const provider = providerOf(exporter);
    const tracer = provider.getTracer('test');
    tracer.startSpan('flushed').end();
    void exporter.forceFlush();
    expect(lines(file)).toHaveLength(1);
    tracer.startSpan('at-exit').end();
    expect(lines(file)).toHaveLength(1);
    for (const l of added) (l as (code: number) => void)(0); // what the process's exit runs
    expect(lines(file).map((l) => spansFromRequest(JSON.parse(l)).map((s) => s.name))).toEqual([['flushed'], ['at-exit']]);
    await provider.shutdown();
    expect(process.listeners('exit').filter((l) => !before.includes(l))).toEqual([]);
  });

  it('writes a full buffer at once, without waiting for flushMs', () => {
    const file = join(dir, 'spans.jsonl');
    const exporter = new JsonlFileSpanExporter(file, undefined, 60_000);
    const tracer = providerOf(exporter).getTracer('test');
    for (let i = 0; i < 1024; i++) tracer.startSpan(`s${i}`).end();
    expect(lines(file)).toHaveLength(1);
    expect(spansFromRequest(JSON.parse(lines(file)[0] ?? ''))).toHaveLength(1024);
    void exporter.shutdown();
  });
});

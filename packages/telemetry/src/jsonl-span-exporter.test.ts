import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

  it('appends one OTLP ExportTraceServiceRequest per line, creating the directory', async () => {
    const file = join(dir, 'nested', 'spans.jsonl');
    const exporter = new JsonlFileSpanExporter(file);
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
});

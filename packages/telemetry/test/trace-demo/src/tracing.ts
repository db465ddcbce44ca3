// Tracing entry of the trace demo, loaded with `node --require ./dist/tracing.js` exactly
// like a service's. The first program argument says where spans go: a JSON-lines file
// path, or an OTLP/HTTP base URL (trace-tail's receiver).
import { DEFAULT_SAMPLING, startTelemetry } from '../../..';

const target = process.argv[2];
if (!target) throw new Error('usage: node --require tracing.js demo.js <spans.jsonl | http://host:port> <amqp-url>');
const exporter = /^https?:\/\//.test(target)
  ? { exporter: 'otlp' as const, endpoint: target }
  : { exporter: 'file' as const, file: target };
// every trace: its roots are no API request (story.ts shows the story sampler's choices)
startTelemetry({
  serviceName: 'trace-demo',
  host: 'demo-host',
  cell: 'cell1',
  ...exporter,
  sampling: { ...DEFAULT_SAMPLING, mode: 'all' },
});

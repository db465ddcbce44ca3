// Tracing entry of the story demo: the default story sampler with a cap of 3 database spans
// per trace. The first program argument says where spans go: a JSON-lines file path, or an
// OTLP/HTTP base URL (trace-tail's collector).
import { DEFAULT_SAMPLING, startTelemetry } from '../../..';

const target = process.argv[2];
if (!target)
  throw new Error('usage: node --require story-tracing.js story.js <spans.jsonl | http://host:port> <amqp-url> <pg-url> <server-uuid>');
const exporter = /^https?:\/\//.test(target)
  ? { exporter: 'otlp' as const, endpoint: target }
  : { exporter: 'file' as const, file: target };
startTelemetry({ serviceName: 'story-demo', host: 'demo-host', ...exporter, sampling: { ...DEFAULT_SAMPLING, dbSpansPerTrace: 3 } });

// Tracing entry of the trace demo, loaded with `node --require ./dist/tracing.js` exactly
// like a service's. The span file comes as the first program argument.
import { startTelemetry } from '../../..';

const file = process.argv[2];
if (!file) throw new Error('usage: node --require tracing.js demo.js <spans.jsonl> <amqp-url>');
startTelemetry({ serviceName: 'trace-demo', host: 'demo-host', cell: 'cell1', exporter: 'file', file });

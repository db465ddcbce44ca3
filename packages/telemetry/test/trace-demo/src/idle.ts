// A process that ends one span, prints "ready" and idles until a signal: it shows that
// spans still in the batch exporter reach the collector on SIGTERM. With `own-handler`
// the process handles SIGTERM itself, as a service does, and calls shutdownTelemetry last.
import { trace } from '@opentelemetry/api';
import { shutdownTelemetry } from '../../..';

const tracer = trace.getTracer('idle');
tracer.startSpan('idle work').end();
if (process.argv[3] === 'own-handler') {
  process.once('SIGTERM', () => {
    tracer.startSpan('graceful stop').end();
    void shutdownTelemetry().then(() => process.exit(0));
  });
}
setInterval(() => undefined, 1000);
console.log('ready');

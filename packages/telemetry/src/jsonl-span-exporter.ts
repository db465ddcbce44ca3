import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * Appends spans to a file as OTLP JSON lines: one `ExportTraceServiceRequest` per line,
 * the format the OpenTelemetry Collector's `otlpjsonfile` receiver and `trace-tail --file`
 * read. Writes are synchronous appends, so several processes may share one file (each
 * line is one `write`) and nothing is lost at exit.
 */
export class JsonlFileSpanExporter implements SpanExporter {
  private stopped = false;

  constructor(private readonly file: string) {
    mkdirSync(dirname(file), { recursive: true });
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.stopped) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error('exporter is shut down') });
      return;
    }
    try {
      const body = JsonTraceSerializer.serializeRequest(spans);
      if (body) appendFileSync(this.file, Buffer.concat([Buffer.from(body), Buffer.from('\n')]));
      resultCallback({ code: ExportResultCode.SUCCESS });
    } catch (err) {
      resultCallback({ code: ExportResultCode.FAILED, error: err instanceof Error ? err : new Error(String(err)) });
    }
  }

  shutdown(): Promise<void> {
    this.stopped = true;
    return Promise.resolve();
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

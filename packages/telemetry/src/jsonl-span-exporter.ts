import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { DEFAULT_ROTATION, RotatingFile, type RotationOptions } from './rotating-file';

/**
 * Appends spans to a file as OTLP JSON lines: one `ExportTraceServiceRequest` per line,
 * the format the OpenTelemetry Collector's `otlpjsonfile` receiver and `trace-tail --file`
 * read. Writes are synchronous appends, so several processes may share one file (each
 * line is one `write`) and nothing is lost at exit. The file rotates by size
 * ({@link RotatingFile}): at most `rotation.keep` files of about `rotation.maxBytes`.
 */
export class JsonlFileSpanExporter implements SpanExporter {
  private stopped = false;
  private readonly out: RotatingFile;

  constructor(file: string, rotation: RotationOptions = DEFAULT_ROTATION) {
    this.out = new RotatingFile(file, rotation);
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.stopped) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error('exporter is shut down') });
      return;
    }
    try {
      const body = JsonTraceSerializer.serializeRequest(spans);
      if (body) this.out.append(Buffer.concat([Buffer.from(body), Buffer.from('\n')]));
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

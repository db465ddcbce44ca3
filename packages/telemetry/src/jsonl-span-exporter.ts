import { diag } from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { DEFAULT_ROTATION, RotatingFile, type RotationOptions } from './rotating-file';

/** How long an ended span may wait to be written with the next ones, by default (ms). */
export const DEFAULT_FILE_FLUSH_MS = 200;
/** Spans written at once at most: a full buffer is written at once, without waiting. */
const MAX_BATCH = 1024;

/**
 * Appends spans to a file as OTLP JSON lines: one `ExportTraceServiceRequest` per line,
 * the format the OpenTelemetry Collector's `otlpjsonfile` receiver and `trace-tail --file`
 * read. Several processes may share one file: each line is one synchronous append. The
 * file rotates by size ({@link RotatingFile}): at most `rotation.keep` files of about
 * `rotation.maxBytes`.
 *
 * Spans that end within `flushMs` of each other go out together, as one line (the resource
 * once, then each span): under load a span per line cost every service a serialization of
 * the whole envelope and an open/write/close per span (e2e bench README). Nothing is lost
 * at exit: whatever is buffered is written synchronously on `forceFlush`, `shutdown` and the
 * process's `exit` event (a crash or `process.exit` included); only a SIGKILL loses the
 * spans of its last `flushMs`. `flushMs` 0 writes each export as it comes.
 */
export class JsonlFileSpanExporter implements SpanExporter {
  private stopped = false;
  private readonly out: RotatingFile;
  private pending: ReadableSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly onExit = (): void => this.flush();

  constructor(
    file: string,
    rotation: RotationOptions = DEFAULT_ROTATION,
    private readonly flushMs: number = DEFAULT_FILE_FLUSH_MS,
  ) {
    this.out = new RotatingFile(file, rotation);
    if (flushMs > 0) process.on('exit', this.onExit);
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.stopped) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error('exporter is shut down') });
      return;
    }
    if (this.flushMs <= 0) {
      const error = this.write(spans);
      resultCallback(error === undefined ? { code: ExportResultCode.SUCCESS } : { code: ExportResultCode.FAILED, error });
      return;
    }
    for (const s of spans) this.pending.push(s);
    if (this.pending.length >= MAX_BATCH) this.flush();
    else if (this.timer === undefined) this.timer = setTimeout(() => this.flush(), this.flushMs).unref();
    resultCallback({ code: ExportResultCode.SUCCESS });
  }

  /** Writes the buffered spans now (synchronously). A failed write is reported through OpenTelemetry's diag logger. */
  private flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const spans = this.pending;
    this.pending = [];
    const error = this.write(spans);
    // NOTE: the export was already answered: the error can only be told, as the SDK tells its own
    if (error !== undefined) diag.error(`span file: ${spans.length} spans not written`, error);
  }

  private write(spans: ReadableSpan[]): Error | undefined {
    try {
      const body = JsonTraceSerializer.serializeRequest(spans);
      if (body) this.out.append(Buffer.concat([Buffer.from(body), Buffer.from('\n')]));
      return undefined;
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  }

  shutdown(): Promise<void> {
    this.flush();
    this.stopped = true;
    process.off('exit', this.onExit);
    return Promise.resolve();
  }

  forceFlush(): Promise<void> {
    this.flush();
    return Promise.resolve();
  }
}

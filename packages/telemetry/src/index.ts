/**
 * Telemetry for every cellsched process: the OpenTelemetry SDK (`startTelemetry`, to be
 * called from a service's `tracing` entry loaded with `node --require`), the OTLP JSON-lines
 * file exporter, and the pino logger with trace correlation. See README.md for the design.
 */
export {
  type TelemetryExporter,
  type TelemetryOptions,
  shutdownTelemetry,
  startTelemetry,
  validateTelemetryOptions,
} from './start-telemetry';
export { DEFAULT_FILE_FLUSH_MS, JsonlFileSpanExporter } from './jsonl-span-exporter';
export { DEFAULT_ROTATION, RotatingFile, type RotationOptions, fileSet, rotatedFiles } from './rotating-file';
export { DEFAULT_SAMPLING, DEFAULT_STORY_REQUESTS, type SamplerMode, type SamplingOptions } from './sampling/sampling-policy';
export { StorySampler } from './sampling/story-sampler';
export { type SavedContext, type SpanFields, annotateSpan, inContext, savedContext, spanEvent, spanRecording } from './annotate';
export { type SignalTarget, type StopOnSignalOptions, runMain, stopOnSignal } from './lifecycle';
export { type Logger, type LoggerOptions, type RequestLogFields, createLogger, requestLogger, traceFields } from './logger';
export {
  type ProcessIdentity,
  type TelemetryConfig,
  loggerOptionsFrom,
  telemetryConfigSchema,
  telemetryOptionsFrom,
} from './config-schema';
export { healthFileConfigSchema, keepHealthFile } from './health-file';
export { type ServicePreload, servicePreloadOptions, startServiceTelemetry } from './service-preload';

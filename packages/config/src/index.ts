/**
 * @cellsched/config: typed options declared as data, loaded from file, env and argv with
 * every problem reported at once; cell0's uuid; test infrastructure URLs.
 * The only package that reads `process.env`.
 */
export {
  defineConfig,
  OPTION_TYPES,
  type Config,
  type ConfigSchema,
  type OptionSpec,
  type OptionType,
  type OptionValue,
  type StringOption,
  type IntOption,
  type FloatOption,
  type BoolOption,
  type UrlOption,
  type EnumOption,
  type ListOption,
  type DurationOption,
} from './schema';
export { ConfigError } from './config-error';
export { loadConfig, CONFIG_FILE_ENV, type LoadOptions } from './load-config';
export { renderHelp, redactUrl, redactConfig } from './render-help';
export { wantsHelp } from './sources';
export { parseDuration, formatDuration } from './duration';
export { deepFreeze } from './deep-freeze';
export { CELL0_UUID } from './cells';
export {
  apiDbUrlOption,
  buildTimeoutOption,
  placementGrpcConfigSchema,
  placementUrlConfigSchema,
  serviceDownTimeOption,
} from './shared-options';
export { testInfra, testInfraSchema, type TestInfra } from './test-infra';

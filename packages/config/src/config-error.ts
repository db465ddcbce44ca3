/**
 * Thrown by `loadConfig` and the cell topology parser. It lists **every** problem found,
 * so an operator fixes a configuration in one pass. Branch on `code`, never on text.
 */
export class ConfigError extends Error {
  readonly code: string;
  readonly problems: readonly string[];

  constructor(problems: readonly string[], code = 'config.invalid', what = 'configuration') {
    const n = problems.length;
    super(`invalid ${what} (${n} problem${n === 1 ? '' : 's'}):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.code = code;
    this.problems = Object.freeze([...problems]);
  }
}

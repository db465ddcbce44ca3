// Lint: correctness of async code plus the package boundaries of shared/STYLE.md.
import tseslint from 'typescript-eslint';

const IO_LIBS = ['amqplib', 'pg', '@grpc/grpc-js', 'pino', 'fastify', '@opentelemetry/*', 'node:net', 'node:http', 'net', 'http',
  '@cellsched/bus', '@cellsched/grpc', '@cellsched/db', '@cellsched/telemetry'];
const SERVICES = ['@cellsched/placement', '@cellsched/scheduler', '@cellsched/api', '@cellsched/super-conductor',
  '@cellsched/cell-conductor', '@cellsched/simulated-compute'];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'packages/wire/src/gen/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/services/**', ...SERVICES], message: 'services never import each other; shared code lives in packages/' },
        { group: ['@cellsched/*/src/**', '@cellsched/*/dist/**'], message: 'no deep imports: use the package entry point' }] }],
    },
  },
  {
    // Domain cores are pure: no I/O library, no telemetry.
    files: ['services/*/src/domain/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: IO_LIBS, message: 'domain code does no I/O: put it behind a port in ports.ts' }] }] },
  },
  {
    // Cell-level services can never reach the API level: not even its clients compile in.
    files: ['services/cell-conductor/**/*.ts', 'services/simulated-compute/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: '@cellsched/wire', importNames: ['SchedulerServiceClient', 'SchedulerServiceService', 'SuperConductorService'], message: 'cell-level services never call the scheduler or the API-level conductor (no upcalls)' },
          { name: '@cellsched/api-clients', message: 'cell-level services never use API-level clients (no upcalls)' }],
        patterns: [{ group: ['**/services/**', ...SERVICES], message: 'services never import each other' }],
      }],
    },
  },
);

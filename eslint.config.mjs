// Lint: correctness of async code plus the package boundaries of shared/STYLE.md.
// ESLint applies only the last matching `no-restricted-imports`, so each block below
// carries every restriction that applies to its files.
import tseslint from 'typescript-eslint';

const SERVICES = ['@cellsched/placement', '@cellsched/scheduler', '@cellsched/api', '@cellsched/super-conductor',
  '@cellsched/cell-conductor', '@cellsched/simulated-compute'];
const NO_SERVICES = { group: ['**/services/**', ...SERVICES], message: 'services never import each other; shared code lives in packages/' };
const NO_DEEP = { group: ['@cellsched/*/src/**', '@cellsched/*/dist/**'], message: 'no deep imports: use the package entry point' };
const NO_IO = {
  group: ['amqplib', 'pg', '@grpc/grpc-js', 'pino', 'fastify', '@opentelemetry/*', 'node:net', 'node:http', 'net', 'http',
    '@cellsched/bus', '@cellsched/grpc', '@cellsched/db', '@cellsched/telemetry'],
  message: 'domain code does no I/O: put it behind a port in ports.ts',
};
const NO_UPCALL = [
  { name: '@cellsched/wire', importNames: ['SchedulerServiceClient', 'SchedulerServiceService', 'SuperConductorServiceService'],
    message: 'cell-level services never call the scheduler or the API-level conductor (no upcalls)' },
  { name: '@cellsched/api-clients', message: 'cell-level services never use API-level clients (no upcalls)' },
  { name: '@cellsched/api-db', message: 'cell-level services never touch the API database (no upcalls)' },
];
const restrict = (patterns, paths = []) => ({ 'no-restricted-imports': ['error', { paths, patterns }] });
const CELL_LEVEL = ['services/cell-conductor/**/*.ts', 'services/simulated-compute/**/*.ts'];
const DOMAIN = ['services/*/src/domain/**/*.ts'];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'packages/wire/src/gen/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: {
      parserOptions: { project: ['./tsconfig.test.json', './packages/*/tsconfig.json', './services/*/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      ...restrict([NO_SERVICES, NO_DEEP]),
    },
  },
  // Domain cores are pure: no I/O library, no telemetry.
  { files: DOMAIN, rules: restrict([NO_SERVICES, NO_DEEP, NO_IO]) },
  // Cell-level services can never reach the API level: not even its clients compile in.
  { files: CELL_LEVEL, rules: restrict([NO_SERVICES, NO_DEEP], NO_UPCALL) },
  { files: CELL_LEVEL.map((g) => g.replace('/**/*.ts', '/src/domain/**/*.ts')), rules: restrict([NO_SERVICES, NO_DEEP, NO_IO], NO_UPCALL) },
);

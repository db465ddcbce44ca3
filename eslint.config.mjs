// Lint: correctness of async code plus the package boundaries of shared/STYLE.md.
// ESLint applies only the last matching `no-restricted-imports`, so each block below
// carries every restriction that applies to its files.
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const SERVICES = [
  '@cellsched/placement',
  '@cellsched/scheduler',
  '@cellsched/api',
  '@cellsched/super-conductor',
  '@cellsched/cell-conductor',
  '@cellsched/simulated-compute',
];
const NO_SERVICES = { group: ['**/services/**', ...SERVICES], message: 'services never import each other; shared code lives in packages/' };
const NO_DEEP = { group: ['@cellsched/*/src/**', '@cellsched/*/dist/**'], message: 'no deep imports: use the package entry point' };
const NO_IO = {
  group: [
    'amqplib',
    'pg',
    '@grpc/grpc-js',
    'pino',
    'fastify',
    '@opentelemetry/*',
    'node:net',
    'node:http',
    'net',
    'http',
    '@cellsched/bus',
    '@cellsched/grpc',
    '@cellsched/db',
    '@cellsched/telemetry',
  ],
  message: 'domain code does no I/O: put it behind a port in ports.ts',
};
const NO_UPCALL = [
  {
    name: '@cellsched/wire',
    importNames: ['SchedulerServiceClient', 'SchedulerServiceService', 'SuperConductorServiceService'],
    message: 'cell-level services never call the scheduler or the API-level conductor (no upcalls)',
  },
  { name: '@cellsched/api-clients', message: 'cell-level services never use API-level clients (no upcalls)' },
  { name: '@cellsched/api-db', message: 'cell-level services never touch the API database (no upcalls)' },
];
const TS_PROJECTS = ['./tsconfig.test.json', './packages/*/tsconfig.json', './services/*/tsconfig.json'];
// import-x's TypeScript settings (extensions, parser), with the resolver given below instead of its default one.
const { 'import-x/resolver': _defaultResolver, ...IMPORT_X_TS_SETTINGS } = importX.flatConfigs.typescript.settings;
const restrict = (patterns, paths = []) => ({ 'no-restricted-imports': ['error', { paths, patterns }] });
const CELL_LEVEL = ['services/cell-conductor/**/*.ts', 'services/simulated-compute/**/*.ts'];
const DOMAIN = ['services/*/src/domain/**/*.ts'];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'packages/wire/src/gen/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: {
      parserOptions: { project: TS_PROJECTS, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: {
      ...IMPORT_X_TS_SETTINGS,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: TS_PROJECTS })],
    },
    rules: {
      // No import cycles, inside a package or across packages: dependencies point one way (shared/STYLE.md).
      // Type-only imports are erased at run time and are not counted (the rule's default).
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
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

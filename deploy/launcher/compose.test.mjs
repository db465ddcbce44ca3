// The compose rendering of the plan (`node --test deploy/launcher`, a step of `pnpm test`): the
// committed file is fresh, and any rendering keeps the native launcher's credentials, roles and
// isolation, health-ordered start and pool-sized PostgreSQL.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { COMPOSE_DEFAULTS } from './commands.mjs';
import { composeDocument, composePlan, renderCompose } from './compose.mjs';
import { SYSTEM_DEFAULTS, systemPlan, systemServices } from './system.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const OPTIONS = { ...COMPOSE_DEFAULTS, cells: 3, hostsPerCell: 5, schedulers: 3, portOffset: 100 };
const doc = composeDocument(composePlan(OPTIONS), '..');
const services = doc.services;
const userOf = (url) => decodeURIComponent(new URL(url).username);
const urlsOf = (env) => Object.values(env).filter((v) => /^(postgres|amqp):\/\//.test(v));

test('the committed deploy/compose.yaml is what `pnpm stack compose` renders (else run it)', () => {
  const committed = readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8');
  assert.equal(committed, renderCompose(COMPOSE_DEFAULTS, '..', 'pnpm stack compose'));
});

test('the rendered YAML reads back as the same document (python3-yaml, as CI installs it)', () => {
  const text = renderCompose(OPTIONS, '..', 'test');
  const json = execFileSync('python3', ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'], {
    input: text,
    encoding: 'utf8',
  });
  assert.deepEqual(JSON.parse(json), JSON.parse(JSON.stringify(doc)));
});

test('one container per process of the plan, plus PostgreSQL, RabbitMQ, the trace collector, init and the jaeger profile', () => {
  const cells = ['cell1', 'cell2', 'cell3'];
  assert.deepEqual(
    Object.keys(services).sort(),
    [
      'postgres',
      'rabbitmq',
      'traces',
      'init',
      'placement',
      'jaeger',
      'super-conductor',
      'api',
      ...cells.flatMap((c) => [`cell-conductor-${c}`, `compute-${c}`]),
      'scheduler-0',
      'scheduler-1',
      'scheduler-2',
    ].sort(),
  );
  assert.deepEqual(services.jaeger.profiles, ['jaeger']);
});

test('every process has the env of its native row, with the same roles in every URL (only hosts differ)', () => {
  const native = systemServices(
    systemPlan(OPTIONS, { adminUrl: 'postgres://a:b@127.0.0.1:5432/postgres', amqpBase: 'amqp://127.0.0.1:5672/' }),
    {},
  );
  for (const row of native) {
    const env = services[row.name].environment;
    for (const [k, v] of Object.entries(row.env())) {
      if (/^(postgres|amqp):/.test(v)) assert.equal(userOf(env[k]), userOf(v), `${row.name} ${k}`);
      else if (!/(HOST|GRPC|ADDRESSES|_URL)$/.test(k)) assert.equal(env[k], v, `${row.name} ${k}`);
    }
  }
});

test("cell-level containers hold their own cell's credentials only; the scheduler and the api read cells as read-only roles", () => {
  for (const [name, s] of Object.entries(services).filter(([n]) => /^(cell-conductor|compute)-/.test(n))) {
    const cell = name.split('-').pop();
    const users = urlsOf(s.environment).map(userOf);
    assert.ok(users.length > 0 && users.every((u) => u === `cellsched_${cell}`), `${name}: ${users}`);
    assert.equal(s.environment.CELLSCHED_PLACEMENT_URL, 'http://placement:8878', name);
  }
  for (const i of [0, 1, 2]) {
    const env = services[`scheduler-${i}`].environment;
    assert.equal(userOf(env.CELLSCHED_API_DB_URL), 'cellsched_scheduler');
    assert.equal(env.CELLSCHED_SCHEDULER_CELL_DB_USER, 'cellsched_scheduler');
  }
  assert.equal(services.api.environment.CELLSCHED_API_CELL_DB_USER, 'cellsched_api_cells');
  assert.equal(services['super-conductor'].environment.CELLSCHED_SCHEDULER_GRPC, 'scheduler-0:8880,scheduler-1:8881,scheduler-2:8882');
});

test('every long-running service has a health check, and starts only once what it needs is healthy', () => {
  for (const [name, s] of Object.entries(services).filter(([n]) => n !== 'jaeger')) {
    assert.ok(Array.isArray(s.healthcheck?.test) && s.healthcheck.test[0] === 'CMD', `${name} has no health check`);
    for (const [dep, { condition }] of Object.entries(s.depends_on ?? {})) {
      assert.ok(services[dep], `${name} depends on unknown ${dep}`);
      assert.ok(
        condition === 'service_healthy' || (dep === 'init' && condition === 'service_completed_successfully'),
        `${name} -> ${dep}: ${condition}`,
      );
    }
  }
  assert.deepEqual(Object.keys(services.api.depends_on), ['init', 'super-conductor']);
  assert.deepEqual(Object.keys(services['compute-cell2'].depends_on), ['rabbitmq', 'placement', 'cell-conductor-cell2']);
  assert.equal(services.init.restart, 'no');
});

test('PostgreSQL max_connections covers every pool the containers are given', () => {
  const env = (n) => services[n].environment;
  const cells = 3;
  const pool = (n, k) => Number(env(n)[k]);
  const sum =
    pool('placement', 'CELLSCHED_PLACEMENT_DB_POOL') +
    pool('api', 'CELLSCHED_API_DB_POOL') +
    (cells + 1) * pool('api', 'CELLSCHED_API_CELL_DB_POOL') +
    [0, 1, 2].reduce((a, i) => a + (cells + 1) * pool(`scheduler-${i}`, 'CELLSCHED_SCHEDULER_DB_POOL'), 0) +
    (cells + 2) * pool('super-conductor', 'CELLSCHED_SUPER_CONDUCTOR_DB_POOL') +
    [1, 2, 3].reduce((a, i) => a + pool(`cell-conductor-cell${i}`, 'CELLSCHED_CELL_DB_POOL'), 0);
  const max = Number(services.postgres.command.find((a) => a.startsWith('max_connections=')).split('=')[1]);
  assert.ok(max >= sum + 10, `max_connections ${max} < pools ${sum} + room for init and operators`);
});

test("data in named volumes; only the api, placement, the collector and PostgreSQL are published, on loopback at the plan's ports", () => {
  assert.deepEqual(Object.keys(doc.volumes).sort(), ['postgres-data', 'rabbitmq-data']);
  assert.deepEqual(services.postgres.volumes, ['postgres-data:/var/lib/postgresql/data']);
  const published = Object.entries(services)
    .filter(([n, s]) => s.ports && n !== 'jaeger')
    .map(([n, s]) => [n, s.ports]);
  assert.deepEqual(published, [
    ['postgres', ['127.0.0.1:15532:5432']],
    ['traces', ['127.0.0.1:4418:4418']],
    ['placement', ['127.0.0.1:8878:8878']],
    ['api', ['127.0.0.1:8874:8874']],
  ]);
});

test('init is given the options of the plan it renders from (it provisions that very plan)', () => {
  assert.deepEqual(services.init.command.slice(2), [
    '--cells',
    '3',
    '--hosts-per-cell',
    '5',
    '--schedulers',
    '3',
    '--prefix',
    SYSTEM_DEFAULTS.prefix,
  ]);
});

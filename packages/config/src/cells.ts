import { readFileSync } from 'node:fs';
import { ConfigError } from './config-error';
import { deepFreeze } from './deep-freeze';

/** Nova's fixed uuid of cell0 (`objects.CellMapping.CELL0_UUID`). */
export const CELL0_UUID = '00000000-0000-0000-0000-000000000000';
/** Env var holding the topology as inline JSON. */
export const CELLS_ENV = 'CELLSCHED_CELLS';
/** Env var holding the path of a JSON file with the topology. */
export const CELLS_FILE_ENV = 'CELLSCHED_CELLS_FILE';

/** One real cell, as a Nova `cell_mappings` row: its own database and its own bus (vhost). */
export interface CellMapping {
  readonly uuid: string;
  readonly name: string;
  readonly dbUrl: string;
  readonly transportUrl: string;
}

/** Cell 0: a database only, where instances that could not be scheduled are buried. */
export interface Cell0Mapping { readonly uuid: typeof CELL0_UUID; readonly name: string; readonly dbUrl: string }

/** The whole deployment: the API-level database and bus, cell0 and the real cells. */
export interface CellTopology {
  readonly apiDbUrl: string;
  readonly apiTransportUrl: string;
  readonly cell0: Cell0Mapping;
  readonly cells: readonly CellMapping[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DB_SCHEMES = ['postgres:', 'postgresql:'];
const BUS_SCHEMES = ['amqp:', 'amqps:'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function url(o: Obj, key: string, schemes: readonly string[], where: string, problems: string[]): string {
  const v = o[key];
  if (typeof v !== 'string' || !URL.canParse(v)) problems.push(`${where}.${key}: must be a URL, got ${JSON.stringify(v)}`);
  else if (!schemes.includes(new URL(v).protocol)) problems.push(`${where}.${key}: scheme must be one of ${schemes.join(', ')}`);
  else return v;
  return '';
}

function text(o: Obj, key: string, where: string, problems: string[], dflt?: string): string {
  const v = o[key] ?? dflt;
  if (typeof v === 'string' && v.trim() !== '') return v;
  problems.push(`${where}.${key}: must be a non-empty string, got ${JSON.stringify(v)}`);
  return '';
}

function parseCell0(raw: unknown, problems: string[]): Cell0Mapping {
  if (!isObj(raw)) { problems.push('cell0: must be an object with dbUrl'); return { uuid: CELL0_UUID, name: 'cell0', dbUrl: '' }; }
  const uuid = raw.uuid ?? CELL0_UUID;
  if (uuid !== CELL0_UUID) problems.push(`cell0.uuid: must be ${CELL0_UUID}, got ${JSON.stringify(uuid)}`);
  return { uuid: CELL0_UUID, name: text(raw, 'name', 'cell0', problems, 'cell0'), dbUrl: url(raw, 'dbUrl', DB_SCHEMES, 'cell0', problems) };
}

function parseCell(raw: unknown, i: number, problems: string[]): CellMapping | undefined {
  const where = `cells[${i}]`;
  if (!isObj(raw)) { problems.push(`${where}: must be an object`); return undefined; }
  const uuid = text(raw, 'uuid', where, problems).toLowerCase();
  if (uuid !== '' && !UUID.test(uuid)) problems.push(`${where}.uuid: ${JSON.stringify(raw.uuid)} is not a uuid`);
  if (uuid === CELL0_UUID) problems.push(`${where}.uuid: ${CELL0_UUID} is reserved for cell0`);
  return {
    uuid, name: text(raw, 'name', where, problems),
    dbUrl: url(raw, 'dbUrl', DB_SCHEMES, where, problems),
    transportUrl: url(raw, 'transportUrl', BUS_SCHEMES, where, problems),
  };
}

function checkUnique(cell0: Cell0Mapping, cells: readonly CellMapping[], problems: string[]): void {
  const names = new Map<string, string>([[cell0.name, 'cell0']]);
  const uuids = new Map<string, string>();
  cells.forEach((c, i) => {
    const where = `cells[${i}]`;
    const byName = names.get(c.name);
    if (c.name !== '' && byName !== undefined) problems.push(`${where}.name: ${JSON.stringify(c.name)} is also used by ${byName}`);
    const byUuid = uuids.get(c.uuid);
    if (c.uuid !== '' && byUuid !== undefined) problems.push(`${where}.uuid: ${c.uuid} is also used by ${byUuid}`);
    names.set(c.name, where);
    uuids.set(c.uuid, where);
  });
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'postgres:': '5432', 'postgresql:': '5432', 'amqp:': '5672', 'amqps:': '5671' };

/** Where a URL leads, credentials aside: two users of one database are still one database. */
function endpoint(text: string): string {
  const u = new URL(text);
  const family = u.protocol.startsWith('postgres') ? 'db' : 'bus';
  const vhostOrDb = decodeURIComponent(u.pathname.replace(/^\//, '')) || (family === 'bus' ? '/' : '');
  return `${family}://${u.hostname.toLowerCase()}:${u.port || DEFAULT_PORTS[u.protocol] || ''}/${vhostOrDb}`;
}

/** Each cell has its own database and its own bus (vhost), distinct from the API's and cell0's. */
function checkIsolation(t: Omit<CellTopology, 'cells'>, cells: readonly CellMapping[], problems: string[]): void {
  const owners = new Map<string, string>();
  const claim = (url: string, who: string): void => {
    if (url === '') return;
    const key = endpoint(url);
    const other = owners.get(key);
    if (other !== undefined) problems.push(`${who}: ${key} is also used by ${other}; every cell needs its own database and vhost`);
    else owners.set(key, who);
  };
  claim(t.apiDbUrl, 'topology.apiDbUrl');
  claim(t.apiTransportUrl, 'topology.apiTransportUrl');
  claim(t.cell0.dbUrl, 'cell0.dbUrl');
  cells.forEach((c, i) => { claim(c.dbUrl, `cells[${i}].dbUrl`); claim(c.transportUrl, `cells[${i}].transportUrl`); });
}

/**
 * Validates a topology (a JSON string or an already parsed value). Uuids are lowercased.
 * Throws one `ConfigError` (code `config.cells.invalid`) listing every problem: missing
 * or malformed URLs (postgres/amqp schemes), non-uuid or duplicate uuids, duplicate names,
 * a cell0 uuid other than Nova's all-zero uuid, two of API/cell0/cells sharing a database or
 * a vhost (whatever the credentials). Returns a deep-frozen object.
 */
export function parseCellTopology(input: unknown, source = 'cell topology'): CellTopology {
  const problems: string[] = [];
  let data = input;
  if (typeof input === 'string') {
    try { data = JSON.parse(input); } catch (err) { problems.push(`not JSON: ${(err as Error).message}`); }
  }
  if (problems.length === 0 && !isObj(data)) problems.push('must be a JSON object {apiDbUrl, apiTransportUrl, cell0, cells}');
  if (problems.length > 0 || !isObj(data)) throw new ConfigError(problems, 'config.cells.invalid', source);
  const apiDbUrl = url(data, 'apiDbUrl', DB_SCHEMES, 'topology', problems);
  const apiTransportUrl = url(data, 'apiTransportUrl', BUS_SCHEMES, 'topology', problems);
  const cell0 = parseCell0(data.cell0, problems);
  if (!Array.isArray(data.cells)) problems.push('topology.cells: must be an array');
  const cells = (Array.isArray(data.cells) ? data.cells : [])
    .map((c, i) => parseCell(c, i, problems)).filter((c): c is CellMapping => c !== undefined);
  checkUnique(cell0, cells, problems);
  checkIsolation({ apiDbUrl, apiTransportUrl, cell0 }, cells, problems);
  if (problems.length > 0) throw new ConfigError(problems, 'config.cells.invalid', source);
  return deepFreeze({ apiDbUrl, apiTransportUrl, cell0, cells });
}

/**
 * Loads the topology from `opts.file`, else env `CELLSCHED_CELLS` (inline JSON), else env
 * `CELLSCHED_CELLS_FILE` (a path). Setting both env vars is refused as ambiguous.
 * Throws `ConfigError` (`config.cells.invalid`) when none is set or the content is invalid.
 */
export function loadCellTopology(opts: { env?: Readonly<Record<string, string | undefined>>; file?: string } = {}): CellTopology {
  const env = opts.env ?? process.env;
  const inline = env[CELLS_ENV] || undefined;
  const path = opts.file ?? (env[CELLS_FILE_ENV] || undefined);
  if (opts.file === undefined && inline !== undefined && path !== undefined) {
    throw new ConfigError([`set either ${CELLS_ENV} or ${CELLS_FILE_ENV}, not both`], 'config.cells.invalid', 'cell topology');
  }
  if (opts.file === undefined && inline !== undefined) return parseCellTopology(inline, `cell topology (env ${CELLS_ENV})`);
  if (path === undefined) {
    throw new ConfigError([`no cell topology: set ${CELLS_ENV} (JSON) or ${CELLS_FILE_ENV} (path)`], 'config.cells.invalid', 'cell topology');
  }
  let content: string;
  try { content = readFileSync(path, 'utf8'); } catch (err) {
    throw new ConfigError([`cannot read ${path}: ${(err as Error).message}`], 'config.cells.invalid', 'cell topology');
  }
  return parseCellTopology(content, `cell topology (${path})`);
}

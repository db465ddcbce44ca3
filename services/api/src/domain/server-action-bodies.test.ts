import type { Microversion } from './microversion';
import { parseRebuild } from './rebuild-body';
import { parseEvacuate, parseMigrate, parseMigrateLive, parseReboot, parseResize, parseUnshelve } from './server-action-bodies';

const v = (minor: number): Microversion => ({ major: 2, minor });
const IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6';
const err = (fn: () => unknown): string => {
  try {
    fn();
    return 'ok';
  } catch (e) {
    return `${(e as { status: number }).status} ${(e as Error).message}`;
  }
};

describe('reboot and resize bodies', () => {
  it('reboot type is required, any case Nova lists, upper-cased', () => {
    expect(parseReboot({ reboot: { type: 'hard' } }).rebootType).toBe('HARD');
    expect(parseReboot({ reboot: { type: 'Soft' } }).rebootType).toBe('SOFT');
    expect(err(() => parseReboot({ reboot: {} }))).toBe(
      "400 Invalid input for field/attribute reboot. Value: {}. 'type' is a required property",
    );
    expect(err(() => parseReboot({ reboot: { type: 'HArd' } }))).toMatch(
      /^400 .*'HArd' is not one of \['HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft'\]$/,
    );
    expect(err(() => parseReboot({ reboot: { type: 'HARD', now: true } }))).toMatch(
      /Additional properties are not allowed \('now' was unexpected\)/,
    );
    expect(err(() => parseReboot({ reboot: null }))).toBe(
      "400 Invalid input for field/attribute reboot. Value: null. None is not of type 'object'",
    );
  });

  it('resize takes flavorRef as a string, an integer or a link', () => {
    expect(parseResize({ resize: { flavorRef: 2 } }).flavorRef).toBe('2');
    expect(parseResize({ resize: { flavorRef: 'http://x/flavors/42', 'OS-DCF:diskConfig': 'AUTO' } }).flavorRef).toBe('42');
    expect(err(() => parseResize({ resize: {} }))).toMatch(/'flavorRef' is a required property$/);
    expect(err(() => parseResize({ resize: { flavorRef: '' } }))).toMatch(/is too short$/);
    expect(err(() => parseResize({ resize: { flavorRef: 1.5 } }))).toMatch(/is not of type 'string', 'integer'$/);
  });
});

describe('migrate bodies', () => {
  it('migrate reads host only from 2.56', () => {
    expect(parseMigrate({ migrate: { host: 'h2' } }, v(55))).toEqual({ action: 'migrate', verb: 'migrate' });
    expect(parseMigrate({ migrate: { host: 'h2' } }, v(56)).host).toBe('h2');
    expect(parseMigrate({ migrate: null }, v(56)).host).toBeUndefined();
    expect(parseMigrate({ migrate: { host: null } }, v(60)).host).toBeUndefined();
    expect(err(() => parseMigrate({ migrate: { host: 'bad host' } }, v(56)))).toMatch(/does not match/);
    expect(err(() => parseMigrate({ migrate: { hots: 'x' } }, v(56)))).toMatch(/'hots' was unexpected/);
  });

  it('os-migrateLive: disk_over_commit before 2.25, "auto" from 2.25, force 2.30-2.67', () => {
    expect(parseMigrateLive({ 'os-migrateLive': { host: null, block_migration: false, disk_over_commit: false } }, v(1))).toEqual({
      action: 'live-migration',
      verb: 'os-migrateLive',
      host: undefined,
      blockMigration: 'false',
    });
    expect(err(() => parseMigrateLive({ 'os-migrateLive': { host: null, block_migration: false } }, v(24)))).toMatch(
      /'disk_over_commit' is a required property/,
    );
    expect(
      err(() => parseMigrateLive({ 'os-migrateLive': { host: null, block_migration: 'auto', disk_over_commit: false } }, v(24))),
    ).toMatch(/^400/);
    expect(parseMigrateLive({ 'os-migrateLive': { host: 'h2', block_migration: 'auto' } }, v(25))).toMatchObject({
      host: 'h2',
      blockMigration: 'auto',
    });
    expect(err(() => parseMigrateLive({ 'os-migrateLive': { block_migration: 'auto' } }, v(60)))).toMatch(/'host' is a required property/);
    expect(err(() => parseMigrateLive({ 'os-migrateLive': { host: null, block_migration: 'auto', force: true } }, v(30)))).toBe(
      "400 Can't force to a non-provided destination",
    );
    expect(parseMigrateLive({ 'os-migrateLive': { host: 'h2', block_migration: 'true', force: true } }, v(60))).toMatchObject({
      blockMigration: 'true',
      force: true,
    });
    expect(parseMigrateLive({ 'os-migrateLive': { host: 'h2', block_migration: 'auto', force: 'false' } }, v(30)).force).toBeUndefined();
    expect(err(() => parseMigrateLive({ 'os-migrateLive': { host: 'h2', block_migration: 'auto', force: false } }, v(29)))).toMatch(
      /'force' was unexpected/,
    );
    expect(parseMigrateLive({ 'os-migrateLive': { host: 'h2', block_migration: 'auto', force: true } }, v(67)).force).toBe(true);
    expect(err(() => parseMigrateLive({ 'os-migrateLive': { host: 'h2', block_migration: 'auto', force: false } }, v(68)))).toBe(
      "400 Invalid input for field/attribute os-migrateLive. Additional properties are not allowed ('force' was unexpected)",
    );
  });
});

describe('evacuate and unshelve bodies', () => {
  it('evacuate: onSharedStorage required before 2.14, gone after; no new password on shared storage', () => {
    expect(err(() => parseEvacuate({ evacuate: {} }, v(13)))).toMatch(/'onSharedStorage' is a required property/);
    expect(parseEvacuate({ evacuate: { onSharedStorage: 'False', adminPass: 'pw' } }, v(13))).toMatchObject({
      onSharedStorage: false,
      adminPass: 'pw',
    });
    expect(err(() => parseEvacuate({ evacuate: { onSharedStorage: true, adminPass: 'pw' } }, v(2)))).toBe(
      "400 admin password can't be changed on existing disk",
    );
    expect(err(() => parseEvacuate({ evacuate: { onSharedStorage: true } }, v(14)))).toMatch(/'onSharedStorage' was unexpected/);
    expect(parseEvacuate({ evacuate: {} }, v(60))).toEqual({
      action: 'evacuate',
      verb: 'evacuate',
      host: undefined,
      adminPass: undefined,
      onSharedStorage: undefined,
    });
    expect(err(() => parseEvacuate({ evacuate: { force: true } }, v(29)))).toBe("400 Can't force to a non-provided destination");
    expect(parseEvacuate({ evacuate: { host: 'h2', force: true } }, v(29))).toMatchObject({ host: 'h2', force: true });
    expect(parseEvacuate({ evacuate: { host: 'h2', force: false } }, v(64)).force).toBeUndefined();
    expect(err(() => parseEvacuate({ evacuate: { host: 'h2', force: true } }, v(28)))).toMatch(/'force' was unexpected/);
    expect(parseEvacuate({ evacuate: { host: 'h2', force: true } }, v(67)).force).toBe(true);
    expect(err(() => parseEvacuate({ evacuate: { host: 'h2', force: true } }, v(68)))).toMatch(
      /^400 .*Additional properties are not allowed \('force' was unexpected\)$/,
    );
    expect(err(() => parseEvacuate({ evacuate: { host: null } }, v(60)))).toMatch(/None is not of type 'string'/);
  });

  it('unshelve: no schema before 2.77; az required 2.77-2.90; az or null and host from 2.91', () => {
    expect(parseUnshelve({ unshelve: { anything: 1 } }, v(60))).toEqual({ action: 'unshelve', verb: 'unshelve' });
    expect(err(() => parseUnshelve({ unshelve: {} }, v(77)))).toMatch(/'availability_zone' is a required property/);
    expect(parseUnshelve({ unshelve: { availability_zone: 'az1' } }, v(77)).availabilityZone).toBe('az1');
    expect(err(() => parseUnshelve({ unshelve: { host: 'h' } }, v(90)))).toMatch(/'host' was unexpected/);
    expect(parseUnshelve({ unshelve: { availability_zone: null, host: 'h' } }, v(91))).toMatchObject({
      availabilityZone: undefined,
      host: 'h',
    });
  });
});

describe('rebuild body', () => {
  it('needs a uuid imageRef and knows the keys of each version', () => {
    expect(parseRebuild({ rebuild: { imageRef: IMAGE, name: 'new' } }, v(1))).toMatchObject({
      action: 'rebuild',
      imageRef: IMAGE,
      name: 'new',
    });
    expect(err(() => parseRebuild({ rebuild: {} }, v(60)))).toMatch(/'imageRef' is a required property/);
    expect(err(() => parseRebuild({ rebuild: { imageRef: 'nope' } }, v(60)))).toMatch(/'nope' is not a 'uuid'$/);
    expect(err(() => parseRebuild({ rebuild: { imageRef: IMAGE, description: 'd' } }, v(18)))).toMatch(/'description' was unexpected/);
    expect(parseRebuild({ rebuild: { imageRef: IMAGE, description: null } }, v(19)).action).toBe('rebuild');
    expect(err(() => parseRebuild({ rebuild: { imageRef: IMAGE, key_name: null } }, v(53)))).toMatch(/'key_name' was unexpected/);
    expect(parseRebuild({ rebuild: { imageRef: IMAGE, key_name: null } }, v(54)).action).toBe('rebuild');
    expect(err(() => parseRebuild({ rebuild: { imageRef: IMAGE, key_name: 'k' } }, v(54)))).toBe('400 Invalid key_name provided.');
    expect(err(() => parseRebuild({ rebuild: { imageRef: IMAGE, personality: [] } }, v(57)))).toMatch(/'personality' was unexpected/);
    expect(parseRebuild({ rebuild: { imageRef: IMAGE, personality: [{ path: '/etc/x', contents: 'aGk=' }] } }, v(56)).action).toBe(
      'rebuild',
    );
    expect(parseRebuild({ rebuild: { imageRef: IMAGE, user_data: 'aGk=' } }, v(57)).userData).toBe('aGk=');
    expect(parseRebuild({ rebuild: { imageRef: IMAGE, user_data: null } }, v(57)).userData).toBeNull();
    expect(err(() => parseRebuild({ rebuild: { imageRef: IMAGE, user_data: 'not base64!' } }, v(57)))).toMatch(/^400/);
    expect(err(() => parseRebuild({ rebuild: { imageRef: IMAGE, trusted_image_certificates: ['x'] } }, v(63)))).toMatch(
      /^400 Image certificate validation/,
    );
    expect(err(() => parseRebuild({ rebuild: { imageRef: IMAGE, name: ' padded' } }, v(60)))).toMatch(/^400 An invalid 'name' value/);
    expect(err(() => parseRebuild({ rebuild: { imageRef: IMAGE, accessIPv4: '1.2.3' } }, v(60)))).toMatch(/is not a 'ipv4'$/);
  });
});

import { createFlavor, createImage, listFlavors, listImages, type Flavor, type Image } from '@cellsched/api-db';
import { randomUUID } from 'node:crypto';
import { intOption, keyValues, option, UsageError } from '../args';
import { renderTable } from '../table';
import type { Command } from './types';

const DISK_FORMATS = ['ami', 'ari', 'aki', 'vhd', 'vhdx', 'vmdk', 'raw', 'qcow2', 'vdi', 'iso', 'ploop'];
const CONTAINER_FORMATS = ['ami', 'ari', 'aki', 'bare', 'ovf', 'ova', 'docker', 'compressed'];

function imageRows(i: Image): unknown[][] {
  return [
    ['id', i.id],
    ['name', i.name],
    ['status', i.status],
    ['visibility', i.visibility],
    ['container_format', i.containerFormat],
    ['disk_format', i.diskFormat],
    ['min_disk', i.minDisk],
    ['min_ram', i.minRam],
    ['size', i.size],
    ...Object.entries(i.properties).sort(([a], [b]) => a.localeCompare(b)),
  ];
}

function oneOf(value: string | undefined, allowed: readonly string[], what: string): string | undefined {
  if (value !== undefined && !allowed.includes(value))
    throw new UsageError(`argument --${what}: invalid choice: '${value}' (choose from ${allowed.join(', ')})`);
  return value;
}

export const imageCreate: Command = {
  usage:
    'image-create --name NAME [--id UUID] [--disk-format raw] [--container-format bare] [--min-disk GB] [--min-ram MB] [--size BYTES] [--visibility public] [--property k=v ...]',
  help: 'Add an image to the Glance stand-in catalogue; prints it (Glance-like).',
  options: ['name', 'id', 'disk_format', 'container_format', 'min_disk', 'min_ram', 'size', 'visibility', 'property', 'owner'],
  async run(ctx, args) {
    const name = option(args, 'name');
    if (name === undefined || name === '') throw new UsageError('argument --name is required');
    const visibility = oneOf(option(args, 'visibility'), ['public', 'private', 'shared', 'community'], 'visibility') as
      'public' | undefined;
    const { image, created } = await createImage(ctx.apiDb(), {
      id: option(args, 'id') ?? randomUUID(),
      name,
      visibility,
      owner: option(args, 'owner'),
      diskFormat: oneOf(option(args, 'disk_format'), DISK_FORMATS, 'disk-format'),
      containerFormat: oneOf(option(args, 'container_format'), CONTAINER_FORMATS, 'container-format'),
      minDisk: intOption(args, 'min_disk', 0),
      minRam: intOption(args, 'min_ram', 0),
      size: option(args, 'size') === undefined ? undefined : intOption(args, 'size', 0),
      properties: keyValues(args, 'property'),
    });
    if (!created) {
      ctx.io.err(`Image ${image.id} already exists.`);
      return 1;
    }
    ctx.io.out(renderTable(['Property', 'Value'], imageRows(image)));
    return 0;
  },
};

export const imageList: Command = {
  usage: 'image-list',
  help: 'List the images of the Glance stand-in.',
  async run(ctx) {
    const images = await listImages(ctx.apiDb());
    ctx.io.out(
      renderTable(
        ['ID', 'Name', 'Disk Format', 'Size', 'Min Disk', 'Min RAM'],
        images.map((i) => [i.id, i.name, i.diskFormat, i.size, i.minDisk, i.minRam]),
      ),
    );
    return 0;
  },
};

const FLAVOR_HEADERS = ['ID', 'Name', 'Memory_MiB', 'Disk', 'Ephemeral', 'Swap', 'VCPUs', 'RXTX_Factor', 'Is_Public', 'Extra_Specs'];
const flavorRow = (f: Flavor): unknown[] => [
  f.flavorid,
  f.name,
  f.memoryMb,
  f.rootGb,
  f.ephemeralGb,
  f.swap === 0 ? '' : f.swap,
  f.vcpus,
  f.rxtxFactor,
  f.isPublic,
  JSON.stringify(f.extraSpecs),
];

function positiveInt(raw: string | undefined, what: string, min: number): number {
  if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < min)
    throw new UsageError(`${what} must be an integer >= ${min}, got ${JSON.stringify(raw ?? '')}`);
  return Number(raw);
}

export const flavorCreate: Command = {
  usage:
    'flavor-create NAME ID RAM_MB DISK_GB VCPUS [--ephemeral GB] [--swap MB] [--rxtx-factor F] [--is-public true|false] [--property k=v ...]',
  help: "Create a flavor, novaclient style (ID 'auto' generates a uuid); prints it.",
  options: ['ephemeral', 'swap', 'rxtx_factor', 'is_public', 'property'],
  async run(ctx, args) {
    const [name, id, ram, disk, vcpus, ...extra] = args.positionals;
    if (name === undefined || id === undefined || extra.length > 0)
      throw new UsageError('flavor-create takes exactly NAME ID RAM_MB DISK_GB VCPUS');
    const isPublic = option(args, 'is_public') ?? 'true';
    if (!['true', 'false'].includes(isPublic.toLowerCase()))
      throw new UsageError(`argument --is-public: expected true or false, got '${isPublic}'`);
    const rxtx = option(args, 'rxtx_factor');
    const flavor = await createFlavor(ctx.apiDb(), {
      name,
      flavorid: id === 'auto' ? randomUUID() : id,
      memoryMb: positiveInt(ram, 'RAM_MB', 1),
      rootGb: positiveInt(disk, 'DISK_GB', 0),
      vcpus: positiveInt(vcpus, 'VCPUS', 1),
      ephemeralGb: intOption(args, 'ephemeral', 0),
      swap: intOption(args, 'swap', 0),
      rxtxFactor: rxtx === undefined ? undefined : Number(rxtx),
      isPublic: isPublic.toLowerCase() === 'true',
      extraSpecs: keyValues(args, 'property'),
    });
    ctx.io.out(renderTable(FLAVOR_HEADERS, [flavorRow(flavor)]));
    return 0;
  },
};

export const flavorList: Command = {
  usage: 'flavor-list',
  help: 'List every flavor (public and private).',
  async run(ctx) {
    ctx.io.out(renderTable(FLAVOR_HEADERS, (await listFlavors(ctx.apiDb())).map(flavorRow)));
    return 0;
  },
};

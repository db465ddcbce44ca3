import { atLeast } from '../../domain/microversion';
import * as agg from './aggregates';
import * as alloc from './allocations';
import * as inv from './inventories';
import type { Handler, RouteDef } from './kit';
import * as rc from './resource-classes';
import * as rp from './resource-providers';
import { home } from './root';
import * as trait from './traits';
import * as usage from './usages';
import { EXTRA_ROUTES } from './routes-extra';

const rcPut: Handler = (req) => (atLeast(req.version, 7) ? rc.ensure(req) : rc.rename(req));

/**
 * Every URL Placement serves and, per method, its handler, policy and microversion range
 * (placement/handler.py's ROUTE_DECLARATIONS). Methods not listed answer 405 + Allow.
 */
export const ROUTES: readonly RouteDef[] = [
  { path: '/', methods: { GET: { handler: home, policy: 'none' } } },
  {
    path: '/resource_classes',
    methods: {
      GET: { handler: rc.list, policy: 'read', minVersion: 2, json: true },
      POST: { handler: rc.create, policy: 'write', minVersion: 2, requireJson: true },
    },
  },
  {
    path: '/resource_classes/{name}',
    methods: {
      GET: { handler: rc.show, policy: 'read', minVersion: 2, json: true },
      PUT: { handler: rcPut, policy: 'write', minVersion: 2, requireJson: (v) => !atLeast(v, 7) },
      DELETE: { handler: rc.remove, policy: 'write', minVersion: 2 },
    },
  },
  {
    path: '/resource_providers',
    methods: {
      GET: { handler: rp.list, policy: 'read', json: true },
      POST: { handler: rp.create, policy: 'write', requireJson: true },
    },
  },
  {
    path: '/resource_providers/{uuid}',
    methods: {
      GET: { handler: rp.show, policy: 'read', json: true },
      DELETE: { handler: rp.remove, policy: 'write' },
      PUT: { handler: rp.update, policy: 'write', requireJson: true },
    },
  },
  {
    path: '/resource_providers/{uuid}/inventories',
    methods: {
      GET: { handler: inv.list, policy: 'read', json: true },
      POST: { handler: inv.create, policy: 'write', requireJson: true },
      PUT: { handler: inv.setAll, policy: 'write', requireJson: true },
      DELETE: { handler: inv.removeAll, policy: 'write', minVersion: 5, versionStatus: 405 },
    },
  },
  {
    path: '/resource_providers/{uuid}/inventories/{resource_class}',
    methods: {
      GET: { handler: inv.show, policy: 'read', json: true },
      PUT: { handler: inv.update, policy: 'write', requireJson: true },
      DELETE: { handler: inv.remove, policy: 'write' },
    },
  },
  { path: '/resource_providers/{uuid}/usages', methods: { GET: { handler: usage.forProvider, policy: 'read', json: true } } },
  {
    path: '/resource_providers/{uuid}/aggregates',
    methods: {
      GET: { handler: agg.list, policy: 'read', minVersion: 1, json: true },
      PUT: { handler: agg.set, policy: 'write', minVersion: 1, requireJson: true },
    },
  },
  { path: '/resource_providers/{uuid}/allocations', methods: { GET: { handler: alloc.listForProvider, policy: 'read', json: true } } },
  { path: '/allocations', methods: { POST: { handler: alloc.post, policy: 'write', minVersion: 13, requireJson: true } } },
  {
    path: '/allocations/{consumer_uuid}',
    methods: {
      GET: { handler: alloc.listForConsumer, policy: 'read', json: true },
      PUT: { handler: alloc.put, policy: 'write', requireJson: true },
      DELETE: { handler: alloc.remove, policy: 'write' },
    },
  },
  { path: '/traits', methods: { GET: { handler: trait.list, policy: 'read', minVersion: 6, json: true } } },
  {
    path: '/traits/{name}',
    methods: {
      GET: { handler: trait.show, policy: 'read', minVersion: 6 },
      PUT: { handler: trait.put, policy: 'write', minVersion: 6 },
      DELETE: { handler: trait.remove, policy: 'write', minVersion: 6 },
    },
  },
  {
    path: '/resource_providers/{uuid}/traits',
    methods: {
      GET: { handler: trait.listForProvider, policy: 'read', minVersion: 6, json: true },
      PUT: { handler: trait.setForProvider, policy: 'write', minVersion: 6, requireJson: true },
      DELETE: { handler: trait.clearForProvider, policy: 'write', minVersion: 6 },
    },
  },
  { path: '/usages', methods: { GET: { handler: usage.total, policy: 'project-read', minVersion: 9, json: true } } },
  ...EXTRA_ROUTES,
];

import { AGGREGATE_ACTION_ROUTES } from './aggregate-actions';
import { AGGREGATE_ROUTES } from './aggregates';
import { AZ_ROUTES } from './availability-zones';
import { FLAVOR_ACCESS_ROUTES } from './flavor-access';
import { FLAVOR_EXTRA_SPEC_ROUTES } from './flavor-extra-specs';
import { FLAVOR_ROUTES } from './flavors';
import { HYPERVISOR_ROUTES } from './hypervisors';
import { IMAGE_ROUTES } from './images';
import { INSTANCE_ACTION_ROUTES } from './instance-actions';
import type { Route } from './kit';
import { MIGRATION_ROUTES } from './migrations';
import { SERVER_ACTION_ROUTES } from './server-actions';
import { SERVER_GROUP_ROUTES } from './server-groups';
import { SERVER_ROUTES } from './servers';
import { SERVICE_ROUTES } from './services';

/** Every authenticated route of the compute API. */
export const ROUTES: readonly Route[] = [
  ...SERVER_ROUTES,
  ...SERVER_ACTION_ROUTES,
  ...INSTANCE_ACTION_ROUTES,
  ...MIGRATION_ROUTES,
  ...FLAVOR_ROUTES,
  ...FLAVOR_EXTRA_SPEC_ROUTES,
  ...FLAVOR_ACCESS_ROUTES,
  ...SERVER_GROUP_ROUTES,
  ...HYPERVISOR_ROUTES,
  ...SERVICE_ROUTES,
  ...AGGREGATE_ROUTES,
  ...AGGREGATE_ACTION_ROUTES,
  ...AZ_ROUTES,
  ...IMAGE_ROUTES,
];

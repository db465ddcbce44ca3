import { addOnce, OK, type RequestFilter } from './types';

/** The os-traits name of an image's disk format, e.g. qcow2 -> COMPUTE_IMAGE_TYPE_QCOW2. */
export function imageTypeTrait(diskFormat: string): string {
  return `COMPUTE_IMAGE_TYPE_${diskFormat.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}`;
}

/**
 * Nova's `require_image_type_support` (`[scheduler] query_placement_for_image_type_support`):
 * the compute node (root provider) must support the image's disk format.
 */
export const requireImageTypeSupport: RequestFilter = {
  name: 'require_image_type_support',
  enabled: (policy) => policy.queryPlacementForImageTypeSupport,
  apply(query, ctx) {
    const format = ctx.image?.diskFormat ?? '';
    if (format !== '') addOnce(query.rootRequired, imageTypeTrait(format));
    return OK;
  },
};

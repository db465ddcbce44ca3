import type { HostState, SupportedInstance } from '../host-state';
import { canonicalArch, canonicalHvType, canonicalVmMode, versionIntToString, versionSatisfies } from './image-props-canonical';
import { fail, type HostFilter, PASS } from './types';

interface WantedInstance {
  readonly arch: string;
  readonly hvType: string;
  readonly vmMode: string;
}

function matches(wanted: WantedInstance, offered: SupportedInstance): boolean {
  return (
    (wanted.arch === '' || wanted.arch === canonicalArch(offered.arch)) &&
    (wanted.hvType === '' || wanted.hvType === canonicalHvType(offered.hvType)) &&
    (wanted.vmMode === '' || wanted.vmMode === canonicalVmMode(offered.vmMode))
  );
}

function versionOk(host: HostState, predicate: string | undefined): boolean {
  if (predicate === undefined || predicate === '' || host.record.hypervisorVersion === 0) return true;
  return versionSatisfies(versionIntToString(host.record.hypervisorVersion), predicate);
}

/**
 * Nova's ImagePropertiesFilter: when the image asks for `hw_architecture`, `img_hv_type` or
 * `hw_vm_mode` (canonicalized), one of the host's supported_instances must offer all of them,
 * and the hypervisor version must satisfy `img_hv_requested_version`. A host that advertises
 * nothing fails as soon as the image asks for anything.
 */
export const imagePropertiesFilter: HostFilter = {
  name: 'ImagePropertiesFilter',
  hostPasses(host, ctx) {
    const props = ctx.image?.properties ?? {};
    const wanted: WantedInstance = {
      arch: canonicalArch(props.hw_architecture),
      hvType: canonicalHvType(props.img_hv_type),
      vmMode: canonicalVmMode(props.hw_vm_mode),
    };
    if (wanted.arch === '' && wanted.hvType === '' && wanted.vmMode === '') return PASS;
    const supported = host.record.supportedInstances;
    if (supported.length === 0) return fail('host advertises no supported instance types');
    if (!supported.some((s) => matches(wanted, s))) {
      return fail(
        `host supports no instance of arch=${wanted.arch || '*'} hv_type=${wanted.hvType || '*'} vm_mode=${wanted.vmMode || '*'}`,
      );
    }
    if (!versionOk(host, props.img_hv_requested_version))
      return fail(`hypervisor version does not satisfy ${props.img_hv_requested_version ?? ''}`);
    return PASS;
  },
};

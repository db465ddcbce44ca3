import type { SupportedInstance } from '../host-state';
import { ctx, hostState, image, spec } from '../../../test/support/fixtures';
import { imagePropertiesFilter } from './image-properties-filter';
import { versionIntToString, versionSatisfies } from './image-props-canonical';

const KVM: SupportedInstance[] = [
  { arch: 'x86_64', hvType: 'qemu', vmMode: 'hvm' },
  { arch: 'i686', hvType: 'qemu', vmMode: 'hvm' },
];

describe('ImagePropertiesFilter', () => {
  it.each<[string, Record<string, string>, SupportedInstance[], number, boolean]>([
    ['image asks nothing', {}, [], 6002000, true],
    ['matching arch', { hw_architecture: 'x86_64' }, KVM, 6002000, true],
    ['arch alias amd64', { hw_architecture: 'amd64' }, KVM, 6002000, true],
    ['arch alias i386', { hw_architecture: 'i386' }, KVM, 6002000, true],
    ['wrong arch', { hw_architecture: 'aarch64' }, KVM, 6002000, false],
    ['host advertises nothing', { hw_architecture: 'x86_64' }, [], 6002000, false],
    ['hypervisor type and vm mode', { img_hv_type: 'QEMU', hw_vm_mode: 'hvm' }, KVM, 6002000, true],
    ['vm mode alias hv', { hw_vm_mode: 'hv' }, KVM, 6002000, true],
    ['wrong vm mode', { hw_vm_mode: 'exe' }, KVM, 6002000, false],
    ['all three in one triple', { hw_architecture: 'i686', img_hv_type: 'qemu', hw_vm_mode: 'hvm' }, KVM, 6002000, true],
    ['version satisfied', { hw_architecture: 'x86_64', img_hv_requested_version: '>= 6.0' }, KVM, 6002000, true],
    ['version not satisfied', { hw_architecture: 'x86_64', img_hv_requested_version: '>= 7.0' }, KVM, 6002000, false],
    ['version range', { hw_architecture: 'x86_64', img_hv_requested_version: '>=6.0, <6.3' }, KVM, 6002000, true],
  ])('%s', (_n, properties, supportedInstances, hypervisorVersion, pass) => {
    const c = ctx({ spec: spec({ image: image({ properties }) }) });
    expect(imagePropertiesFilter.hostPasses(hostState({ supportedInstances, hypervisorVersion }), c).pass).toBe(pass);
  });

  it.each([
    [6002000, '6.2.0'],
    [1002003, '1.2.3'],
    [0, '0'],
  ])('version %i is %s', (v, s) => {
    expect(versionIntToString(v)).toBe(s);
  });

  it.each([
    ['6.2.0', '>= 6.2', true],
    ['6.2.0', '== 6.2.0', true],
    ['6.2.0', '!= 6.2', false],
    ['6.2.0', 'garbage', false],
  ])('%s %s', (v, p, ok) => {
    expect(versionSatisfies(v, p)).toBe(ok);
  });
});

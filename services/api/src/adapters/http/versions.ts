import { MAX_VERSION, MIN_VERSION, versionString } from '../../domain/microversion';

const UPDATED = '2013-07-23T11:33:21Z';

function v21(baseUrl: string): Record<string, unknown> {
  return {
    id: 'v2.1',
    status: 'CURRENT',
    version: versionString(MAX_VERSION),
    min_version: versionString(MIN_VERSION),
    updated: UPDATED,
    links: [{ rel: 'self', href: `${baseUrl}/v2.1/` }],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2.1' }],
  };
}

/** `GET /`: Nova's version discovery (unauthenticated; only v2.1 is served, no legacy v2.0). */
export function versionsBody(baseUrl: string): unknown {
  const { 'media-types': _m, ...summary } = v21(baseUrl);
  return { versions: [summary] };
}

/** `GET /v2.1`: the v2.1 version document (unauthenticated). */
export function versionBody(baseUrl: string): unknown {
  return { version: v21(baseUrl) };
}

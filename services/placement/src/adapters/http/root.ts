import { atLeast, MAX_VERSION, MIN_VERSION, versionString } from '../../domain/microversion';
import type { Handler } from './kit';
import { httpDate } from './kit';

/** GET /: version discovery (no auth needed). */
export const home: Handler = async (req) => {
  const body = {
    versions: [
      {
        id: `v${versionString(MIN_VERSION)}`,
        max_version: versionString(MAX_VERSION),
        min_version: versionString(MIN_VERSION),
        status: 'CURRENT',
        links: [{ rel: 'self', href: '' }],
      },
    ],
  };
  const headers: Record<string, string> = atLeast(req.version, 15)
    ? { 'cache-control': 'no-cache', 'last-modified': httpDate(new Date()) }
    : {};
  return Promise.resolve({ status: 200, body, headers });
};

import { getImage, listImages, type Image } from '@cellsched/api-db';
import { notFound } from '../../domain/errors';
import { links } from '../../domain/server-view';
import type { ApiDeps, ApiReply, ApiRequest, Route } from './kit';

const iso = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

function detail(i: Image, req: ApiRequest): Record<string, unknown> {
  return {
    id: i.id,
    name: i.name,
    links: links(req, 'images', i.id),
    status: i.status.toUpperCase(),
    minDisk: i.minDisk,
    minRam: i.minRam,
    progress: i.status === 'active' ? 100 : 0,
    created: iso(i.createdAt),
    updated: iso(i.createdAt),
    metadata: { ...i.properties },
    'OS-EXT-IMG-SIZE:size': i.size,
  };
}

function list(detailed: boolean) {
  return async (req: ApiRequest, deps: ApiDeps): Promise<ApiReply> => {
    const images = (await listImages(deps.apiDb)).filter(
      (i) => i.visibility === 'public' || i.owner === req.caller.projectId || req.caller.isAdmin,
    );
    return {
      status: 200,
      body: { images: images.map((i) => (detailed ? detail(i, req) : { id: i.id, name: i.name, links: links(req, 'images', i.id) })) },
    };
  };
}

async function show(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const id = req.params.image_id ?? '';
  const image = await getImage(deps.apiDb, id);
  if (image === undefined) throw notFound('Image not found.');
  return { status: 200, body: { image: detail(image, req) } };
}

/**
 * Nova's image proxy over the Glance stand-in (the API DB's `images`). As in Nova, the
 * proxy is gone from microversion 2.36 (404 there).
 */
export const IMAGE_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v2.1/images', handler: list(false), maxVersion: 35 },
  { method: 'GET', path: '/v2.1/images/detail', handler: list(true), maxVersion: 35 },
  { method: 'GET', path: '/v2.1/images/:image_id', handler: show, maxVersion: 35 },
];

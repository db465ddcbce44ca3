import type { Route } from './kit';
import { SERVER_ROUTES } from './servers';

/** Every authenticated route of the compute API. */
export const ROUTES: readonly Route[] = [...SERVER_ROUTES];

import { defineConfig } from '@cellsched/config';

/** cellsched-manage's options (global flags before the category, or env). */
export const schema = defineConfig({
  apiDbUrl: {
    type: 'url',
    env: 'CELLSCHED_API_DB_URL',
    protocols: ['postgres:', 'postgresql:'],
    secret: true,
    help: "The API database (Nova's [api_database]/connection). Required by every command but `db sync --database_connection`.",
  },
  // NOTE: no default (the services default to 127.0.0.1:8778): `placement audit --delete` against another
  // system's placement would judge every allocation there orphaned, so the operator names it.
  placementUrl: {
    type: 'url',
    env: 'CELLSCHED_PLACEMENT_URL',
    protocols: ['http:', 'https:'],
    help: "Placement's REST endpoint (Nova's [placement] section), e.g. http://127.0.0.1:8778. Required by `placement audit`.",
  },
});

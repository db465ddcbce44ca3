import { defineConfig } from '@cellsched/config';

/** cellsched-manage's options (global flags before the category, or env). */
export const schema = defineConfig({
  apiDbUrl: {
    type: 'url', env: 'CELLSCHED_API_DB_URL', protocols: ['postgres:', 'postgresql:'], secret: true,
    help: "The API database (Nova's [api_database]/connection). Required by every command but `db sync --database_connection`.",
  },
});

#!/bin/sh
# nova-manage's bootstrap for the compose deployment (idempotent): API DB schema, cell0, the
# two cells with fixed uuids, every cell's schema, and the read-only roles' grants (a cell added
# later gets them from its own `db sync --read-only-role ...`).
set -e
m() { node services/manage/dist/main.js "$@"; }
m api_db sync --read-only-role scheduler=cellsched_scheduler
m cell_v2 map_cell0 --database_connection "postgres://cellsched_cell0:cellsched_cell0-dev@postgres:5432/cellsched_cell0"
for i in 1 2; do
  uuid=$([ "$i" = 1 ] && echo 3bee9779-7e6b-5513-a9b0-871ed758ebaf || echo f1f65047-70fd-5298-a28a-77af6796618a)
  m cell_v2 create_cell --name "cell$i" --uuid "$uuid" \
    --transport-url "amqp://cellsched_cell$i:cellsched_cell$i-dev@rabbitmq:5672/cellsched_cell$i" \
    --database_connection "postgres://cellsched_cell$i:cellsched_cell$i-dev@postgres:5432/cellsched_cell$i" || [ $? = 2 ]
done
m db sync --read-only-role scheduler=cellsched_scheduler --read-only-role api=cellsched_api_cells

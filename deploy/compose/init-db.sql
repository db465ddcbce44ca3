-- Roles and databases of the compose deployment (dev passwords: '<name>-dev'). Each role owns
-- only its database, and CONNECT is revoked from PUBLIC, so a cell's credentials cannot even
-- connect to the API database or another cell's.
CREATE ROLE cellsched_api LOGIN PASSWORD 'cellsched_api-dev';
CREATE ROLE cellsched_cell0 LOGIN PASSWORD 'cellsched_cell0-dev';
CREATE ROLE cellsched_cell1 LOGIN PASSWORD 'cellsched_cell1-dev';
CREATE ROLE cellsched_cell2 LOGIN PASSWORD 'cellsched_cell2-dev';
CREATE ROLE cellsched_placement LOGIN PASSWORD 'cellsched_placement-dev';
-- read-only roles, owning nothing: the databases' owners grant them SELECT on what they read
-- (bootstrap.sh: cellsched-manage api_db sync / db sync --read-only-role)
CREATE ROLE cellsched_scheduler LOGIN NOINHERIT PASSWORD 'cellsched_scheduler-dev';
CREATE ROLE cellsched_api_cells LOGIN NOINHERIT PASSWORD 'cellsched_api_cells-dev';
CREATE DATABASE cellsched_api OWNER cellsched_api;
CREATE DATABASE cellsched_cell0 OWNER cellsched_cell0;
CREATE DATABASE cellsched_cell1 OWNER cellsched_cell1;
CREATE DATABASE cellsched_cell2 OWNER cellsched_cell2;
CREATE DATABASE cellsched_placement OWNER cellsched_placement;
REVOKE CONNECT, TEMPORARY ON DATABASE cellsched_api, cellsched_cell0, cellsched_cell1, cellsched_cell2, cellsched_placement FROM PUBLIC;

-- Hosts that stop existing (issue 12).
--
-- Which compute process reports each service: a process that starts again with fewer hosts
-- reports its whole host set, and the cell conductor retires (soft-deletes) that process's
-- other services and their compute nodes, as Nova's compute deletes its orphan compute nodes.
ALTER TABLE services ADD COLUMN compute_process text;
CREATE INDEX services_compute_process_idx ON services (compute_process) WHERE deleted_at IS NULL AND compute_process IS NOT NULL;

-- A deleted service stays deleted: (host, binary) is unique among live rows only, so a host that
-- comes back is registered as a new service with a new id and uuid (Nova's soft delete), and
-- os-services DELETE of the old id stays a 404.
ALTER TABLE services DROP CONSTRAINT services_host_binary_key;
CREATE UNIQUE INDEX services_host_binary_live_idx ON services (host, "binary") WHERE deleted_at IS NULL;

-- One row per compute process of the cell: the start time (epoch ms) of its latest run, so a
-- report of an earlier run delivered late changes nothing, and the resource providers of its
-- retired compute nodes still to delete from placement (placement refuses while allocations of
-- instances still there hold them; they are retried until it accepts).
CREATE TABLE compute_processes (
  name              text PRIMARY KEY,
  incarnation       bigint NOT NULL,
  pending_providers uuid[] NOT NULL DEFAULT '{}',
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);

-- Cell database (Nova's nova / nova_cell0 / nova_cellN), trimmed to what cellsched needs.
-- Table and column names are Nova's (nova/db/main/models.py). Cell 0 uses the same schema.

CREATE TABLE instances (
  id                bigserial PRIMARY KEY,
  uuid              uuid NOT NULL UNIQUE,
  project_id        text NOT NULL,
  user_id           text NOT NULL,
  display_name      text,
  hostname          text,
  -- The flavor the instance was built with (wire Flavor JSON), as Nova's instance_extra.flavor.
  flavor            jsonb NOT NULL,
  image_ref         text,
  vm_state          text NOT NULL CHECK (vm_state IN ('active', 'building', 'paused', 'suspended', 'stopped',
                      'rescued', 'resized', 'soft-delete', 'deleted', 'error', 'shelved', 'shelved_offloaded')),
  task_state        text,
  power_state       integer NOT NULL DEFAULT 0,
  host              text,
  node              text,
  availability_zone text,
  launched_at       timestamptz,
  terminated_at     timestamptz,
  reservation_id    text,
  launch_index      integer NOT NULL DEFAULT 0,
  -- Beyond Nova: the cell conductor's in-cell retry and build-deadline watchdog.
  -- build_attempt counts hosts tried (1 = the scheduler's first choice);
  -- build_host_list holds the alternates not tried yet (wire Selection JSON, in order);
  -- build_request_spec is the RequestSpec JSON the retries send with the build;
  -- build_deadline_at is when a build still in 'building' is presumed lost.
  build_attempt      integer NOT NULL DEFAULT 1 CHECK (build_attempt >= 1),
  build_host_list    jsonb NOT NULL DEFAULT '[]'::jsonb,
  build_request_spec jsonb,
  build_deadline_at  timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  deleted_at        timestamptz
);
CREATE INDEX instances_project_id_idx ON instances (project_id);
CREATE INDEX instances_host_node_idx ON instances (host, node);
CREATE INDEX instances_reservation_id_idx ON instances (reservation_id);
CREATE INDEX instances_created_at_idx ON instances (created_at);
CREATE INDEX instances_build_deadline_idx ON instances (build_deadline_at) WHERE vm_state = 'building';

CREATE TABLE instance_faults (
  id            bigserial PRIMARY KEY,
  instance_uuid uuid NOT NULL REFERENCES instances (uuid) ON DELETE CASCADE,
  code          integer NOT NULL,
  message       text NOT NULL,
  details       text,
  host          text,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX instance_faults_instance_uuid_idx ON instance_faults (instance_uuid, created_at);

-- os-instance-actions: one action per (instance, request), events per step.
CREATE TABLE instance_actions (
  id            bigserial PRIMARY KEY,
  action        text NOT NULL,
  instance_uuid uuid NOT NULL,
  request_id    text NOT NULL,
  user_id       text,
  project_id    text,
  start_time    timestamptz NOT NULL DEFAULT now(),
  finish_time   timestamptz,
  message       text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (instance_uuid, request_id)
);

CREATE TABLE instance_actions_events (
  id          bigserial PRIMARY KEY,
  action_id   bigint NOT NULL REFERENCES instance_actions (id) ON DELETE CASCADE,
  event       text NOT NULL,
  start_time  timestamptz NOT NULL DEFAULT now(),
  finish_time timestamptz,
  result      text,
  traceback   text,
  host        text,
  details     text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
-- One event of a name per host per action: a redelivered step does not record it twice,
-- while a reschedule (same event, another host) does.
CREATE UNIQUE INDEX instance_actions_events_action_event_host_idx
  ON instance_actions_events (action_id, event, (coalesce(host, '')));

CREATE TABLE services (
  id              serial PRIMARY KEY,
  uuid            uuid NOT NULL UNIQUE,
  host            text NOT NULL,
  "binary"        text NOT NULL,
  topic           text,
  report_count    integer NOT NULL DEFAULT 0,
  disabled        boolean NOT NULL DEFAULT false,
  disabled_reason text,
  last_seen_up    timestamptz,
  forced_down     boolean NOT NULL DEFAULT false,
  version         integer NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  deleted_at      timestamptz,
  UNIQUE (host, "binary")
);
CREATE INDEX services_updated_at_idx ON services (updated_at);

CREATE TABLE compute_nodes (
  id                    serial PRIMARY KEY,
  -- Also the compute node's root resource provider uuid in placement.
  uuid                  uuid NOT NULL UNIQUE,
  service_id            integer REFERENCES services (id),
  host                  text NOT NULL,
  hypervisor_hostname   text NOT NULL,
  vcpus                 integer NOT NULL CHECK (vcpus >= 0),
  memory_mb             integer NOT NULL CHECK (memory_mb >= 0),
  local_gb              integer NOT NULL CHECK (local_gb >= 0),
  vcpus_used            integer NOT NULL DEFAULT 0,
  memory_mb_used        integer NOT NULL DEFAULT 0,
  local_gb_used         integer NOT NULL DEFAULT 0,
  hypervisor_type       text NOT NULL DEFAULT 'fake',
  hypervisor_version    integer NOT NULL DEFAULT 0,
  cpu_allocation_ratio  double precision NOT NULL DEFAULT 4.0,
  ram_allocation_ratio  double precision NOT NULL DEFAULT 1.0,
  disk_allocation_ratio double precision NOT NULL DEFAULT 1.0,
  running_vms           integer NOT NULL DEFAULT 0,
  -- [[arch, hv_type, vm_mode], ...] as Nova's supported_instances.
  supported_instances   jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- Nova's stats: num_instances, io_workload, failed_builds, ...
  stats                 jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- 1 once `cellsched-manage cell_v2 discover_hosts` has mapped the host (Nova's column).
  mapped                integer NOT NULL DEFAULT 0,
  created_at            timestamptz NOT NULL DEFAULT now(),
  -- Set by every write (deletion included): the scheduler's cache reads changes since a time.
  updated_at            timestamptz NOT NULL DEFAULT now(),
  deleted_at            timestamptz
);
CREATE UNIQUE INDEX compute_nodes_host_hypervisor_hostname_idx
  ON compute_nodes (host, hypervisor_hostname) WHERE deleted_at IS NULL;
CREATE INDEX compute_nodes_updated_at_idx ON compute_nodes (updated_at);
CREATE INDEX compute_nodes_mapped_idx ON compute_nodes (mapped) WHERE mapped = 0;

CREATE TABLE migrations (
  id              bigserial PRIMARY KEY,
  uuid            uuid NOT NULL UNIQUE,
  instance_uuid   uuid NOT NULL,
  source_compute  text,
  dest_compute    text,
  source_node     text,
  dest_node       text,
  dest_host       text,
  migration_type  text NOT NULL CHECK (migration_type IN ('migration', 'resize', 'live-migration', 'evacuation')),
  status          text NOT NULL,
  cross_cell_move boolean NOT NULL DEFAULT false,
  user_id         text,
  project_id      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  deleted_at      timestamptz
);
CREATE INDEX migrations_instance_uuid_status_idx ON migrations (instance_uuid, status);
CREATE INDEX migrations_by_host_nodes_and_status_idx ON migrations (source_compute, source_node, dest_compute, dest_node, status);

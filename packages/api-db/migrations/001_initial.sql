-- API database (Nova's nova_api), trimmed to what cellsched needs. Table and column
-- names are Nova's (nova/db/api/models.py) so Nova's docs and SQL habits carry over.

CREATE TABLE cell_mappings (
  id                  serial PRIMARY KEY,
  uuid                uuid NOT NULL UNIQUE,
  name                text,
  transport_url       text NOT NULL,
  database_connection text NOT NULL,
  disabled            boolean NOT NULL DEFAULT false,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz
);

CREATE TABLE host_mappings (
  id         serial PRIMARY KEY,
  cell_id    integer NOT NULL REFERENCES cell_mappings (id),
  host       text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz
);
CREATE INDEX host_mappings_cell_id_idx ON host_mappings (cell_id);

CREATE TABLE instance_mappings (
  id                bigserial PRIMARY KEY,
  instance_uuid     uuid NOT NULL UNIQUE,
  -- NULL until the super-conductor has put the instance into a cell (or cell0).
  cell_id           integer REFERENCES cell_mappings (id),
  project_id        text NOT NULL,
  user_id           text,
  queued_for_delete boolean NOT NULL DEFAULT false,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz
);
CREATE INDEX instance_mappings_project_id_idx ON instance_mappings (project_id);
CREATE INDEX instance_mappings_user_id_project_id_idx ON instance_mappings (user_id, project_id);
CREATE INDEX instance_mappings_cell_id_idx ON instance_mappings (cell_id);

CREATE TABLE build_requests (
  id            bigserial PRIMARY KEY,
  instance_uuid uuid NOT NULL UNIQUE,
  project_id    text NOT NULL,
  -- The would-be instance as the API shows it until it has a cell (wire Instance JSON).
  instance      jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz
);
CREATE INDEX build_requests_project_id_idx ON build_requests (project_id);

CREATE TABLE request_specs (
  id            bigserial PRIMARY KEY,
  instance_uuid uuid NOT NULL UNIQUE,
  -- The wire RequestSpec, ts-proto toJSON form.
  spec          jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz
);

CREATE TABLE flavors (
  id           serial PRIMARY KEY,
  name         text NOT NULL UNIQUE,
  memory_mb    integer NOT NULL CHECK (memory_mb > 0),
  vcpus        integer NOT NULL CHECK (vcpus > 0),
  root_gb      integer NOT NULL DEFAULT 0 CHECK (root_gb >= 0),
  ephemeral_gb integer NOT NULL DEFAULT 0 CHECK (ephemeral_gb >= 0),
  flavorid     text NOT NULL UNIQUE,
  swap         integer NOT NULL DEFAULT 0 CHECK (swap >= 0),
  rxtx_factor  double precision NOT NULL DEFAULT 1,
  vcpu_weight  integer,
  disabled     boolean NOT NULL DEFAULT false,
  is_public    boolean NOT NULL DEFAULT true,
  description  text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz
);

CREATE TABLE flavor_extra_specs (
  id         serial PRIMARY KEY,
  flavor_id  integer NOT NULL REFERENCES flavors (id) ON DELETE CASCADE,
  key        text NOT NULL,
  value      text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz,
  UNIQUE (flavor_id, key)
);

CREATE TABLE flavor_projects (
  id         serial PRIMARY KEY,
  flavor_id  integer NOT NULL REFERENCES flavors (id) ON DELETE CASCADE,
  project_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz,
  UNIQUE (flavor_id, project_id)
);

-- Nova's legacy default flavors (ids 1-5), as its early migrations created them.
INSERT INTO flavors (id, name, memory_mb, vcpus, root_gb, ephemeral_gb, flavorid, swap) VALUES
  (1, 'm1.tiny',    512,   1, 1,   0, '1', 0),
  (2, 'm1.small',   2048,  1, 20,  0, '2', 0),
  (3, 'm1.medium',  4096,  2, 40,  0, '3', 0),
  (4, 'm1.large',   8192,  4, 80,  0, '4', 0),
  (5, 'm1.xlarge',  16384, 8, 160, 0, '5', 0);
SELECT setval(pg_get_serial_sequence('flavors', 'id'), (SELECT max(id) FROM flavors));

-- Server groups (os-server-groups).
CREATE TABLE instance_groups (
  id         serial PRIMARY KEY,
  uuid       uuid NOT NULL UNIQUE,
  name       text NOT NULL,
  user_id    text NOT NULL,
  project_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz
);
CREATE INDEX instance_groups_project_id_idx ON instance_groups (project_id);

-- One policy per group (Nova API >= 2.64); rules e.g. {"max_server_per_host": 2}.
CREATE TABLE instance_group_policy (
  id         serial PRIMARY KEY,
  group_id   integer NOT NULL UNIQUE REFERENCES instance_groups (id) ON DELETE CASCADE,
  policy     text NOT NULL CHECK (policy IN ('affinity', 'anti-affinity', 'soft-affinity', 'soft-anti-affinity')),
  rules      jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz
);
CREATE INDEX instance_group_policy_policy_idx ON instance_group_policy (policy);

CREATE TABLE instance_group_member (
  id            serial PRIMARY KEY,
  group_id      integer NOT NULL REFERENCES instance_groups (id) ON DELETE CASCADE,
  instance_uuid uuid NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz,
  UNIQUE (group_id, instance_uuid)
);
CREATE INDEX instance_group_member_instance_idx ON instance_group_member (instance_uuid);

-- Host aggregates. `uuid` is also the placement aggregate uuid (Nova mirrors
-- aggregate membership to placement under the same uuid).
CREATE TABLE aggregates (
  id         serial PRIMARY KEY,
  uuid       uuid NOT NULL UNIQUE,
  name       text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Bumped by every change of the aggregate, its hosts or its metadata.
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE aggregate_hosts (
  id           serial PRIMARY KEY,
  host         text NOT NULL,
  aggregate_id integer NOT NULL REFERENCES aggregates (id) ON DELETE CASCADE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz,
  UNIQUE (host, aggregate_id)
);
CREATE INDEX aggregate_hosts_aggregate_id_idx ON aggregate_hosts (aggregate_id);

-- Keys of note: availability_zone, filter_tenant_id[_suffix] (tenant isolation).
CREATE TABLE aggregate_metadata (
  id           serial PRIMARY KEY,
  aggregate_id integer NOT NULL REFERENCES aggregates (id) ON DELETE CASCADE,
  key          text NOT NULL,
  value        text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz,
  UNIQUE (aggregate_id, key)
);
CREATE INDEX aggregate_metadata_key_idx ON aggregate_metadata (key);

-- Stand-in for Glance: the image catalogue the API validates imageRef against.
CREATE TABLE images (
  id               uuid PRIMARY KEY,
  name             text,
  status           text NOT NULL DEFAULT 'active',
  visibility       text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'private', 'shared', 'community')),
  owner            text,
  container_format text,
  disk_format      text,
  min_disk         integer NOT NULL DEFAULT 0 CHECK (min_disk >= 0),
  min_ram          integer NOT NULL DEFAULT 0 CHECK (min_ram >= 0),
  size             bigint CHECK (size >= 0),
  properties       jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz
);

-- Nova's GlanceFixture images (nova/tests/fixtures/glance.py).
INSERT INTO images (id, name, container_format, disk_format, size, properties) VALUES
  ('155d900f-4e14-4e4c-a73d-069cbf4541e6', 'fakeimage123456', 'raw', 'raw', 25165824,
   '{"kernel_id": "nokernel", "ramdisk_id": "nokernel", "architecture": "x86_64"}'),
  ('a2459075-d96c-40d5-893e-577ff92e721c', 'fakeimage123456', 'ami', 'ami', 58145823,
   '{"kernel_id": "nokernel", "ramdisk_id": "nokernel"}'),
  ('76fa36fc-c930-4bf3-8c8a-ea2a2420deb6', 'fakeimage123456', 'bare', 'raw', 83594576,
   '{"kernel_id": "nokernel", "ramdisk_id": "nokernel", "architecture": "x86_64"}'),
  ('a440c04b-79fa-479c-bed1-0b816eaec379', 'fakeimage6', 'ova', 'vhd', 49163826,
   '{"kernel_id": "nokernel", "ramdisk_id": "nokernel", "architecture": "x86_64", "auto_disk_config": "False"}'),
  ('70a599e0-31e7-49b7-b260-868f441e862b', 'fakeimage7', 'ova', 'vhd', 74185822,
   '{"kernel_id": "nokernel", "ramdisk_id": "nokernel", "architecture": "x86_64", "auto_disk_config": "True"}');

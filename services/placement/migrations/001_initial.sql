-- Placement database, modelled on OpenStack Placement's schema (placement/db/sqlalchemy/models.py):
-- integer surrogate keys internally, uuids at the API.

CREATE TABLE resource_classes (
  id          serial PRIMARY KEY,
  name        varchar(255) NOT NULL UNIQUE,
  -- standard classes are seeded with Placement's fixed ids (VCPU=0, MEMORY_MB=1, ...);
  -- custom classes start at 10000 as in Placement.
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz
);

CREATE TABLE traits (
  id          serial PRIMARY KEY,
  name        varchar(255) NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz
);

CREATE TABLE resource_providers (
  id                  serial PRIMARY KEY,
  uuid                uuid NOT NULL UNIQUE,
  name                varchar(200) NOT NULL UNIQUE,
  generation          integer NOT NULL DEFAULT 0,
  root_provider_id    integer REFERENCES resource_providers(id),
  parent_provider_id  integer REFERENCES resource_providers(id),
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz
);
CREATE INDEX resource_providers_root_provider_id_idx ON resource_providers(root_provider_id);
CREATE INDEX resource_providers_parent_provider_id_idx ON resource_providers(parent_provider_id);

CREATE TABLE inventories (
  id                    serial PRIMARY KEY,
  resource_provider_id  integer NOT NULL REFERENCES resource_providers(id),
  resource_class_id     integer NOT NULL REFERENCES resource_classes(id),
  total                 integer NOT NULL,
  reserved              integer NOT NULL DEFAULT 0,
  min_unit              integer NOT NULL DEFAULT 1,
  max_unit              integer NOT NULL,
  step_size             integer NOT NULL DEFAULT 1,
  allocation_ratio      double precision NOT NULL DEFAULT 1.0,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz,
  UNIQUE (resource_provider_id, resource_class_id)
);
CREATE INDEX inventories_resource_class_id_idx ON inventories(resource_class_id);

CREATE TABLE projects (
  id          serial PRIMARY KEY,
  external_id varchar(255) NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz
);

CREATE TABLE users (
  id          serial PRIMARY KEY,
  external_id varchar(255) NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz
);

CREATE TABLE consumer_types (
  id          serial PRIMARY KEY,
  name        varchar(255) NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz
);

CREATE TABLE consumers (
  id              serial PRIMARY KEY,
  uuid            uuid NOT NULL UNIQUE,
  project_id      integer NOT NULL REFERENCES projects(id),
  user_id         integer NOT NULL REFERENCES users(id),
  generation      integer NOT NULL DEFAULT 0,
  consumer_type_id integer REFERENCES consumer_types(id),
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz
);
CREATE INDEX consumers_project_user_idx ON consumers(project_id, user_id);

CREATE TABLE allocations (
  id                    serial PRIMARY KEY,
  resource_provider_id  integer NOT NULL REFERENCES resource_providers(id),
  consumer_id           uuid NOT NULL,
  resource_class_id     integer NOT NULL REFERENCES resource_classes(id),
  used                  integer NOT NULL,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz
);
CREATE INDEX allocations_rp_rc_idx ON allocations(resource_provider_id, resource_class_id);
CREATE INDEX allocations_consumer_id_idx ON allocations(consumer_id);
CREATE INDEX allocations_rc_idx ON allocations(resource_class_id);

CREATE TABLE placement_aggregates (
  id    serial PRIMARY KEY,
  uuid  uuid NOT NULL UNIQUE
);

CREATE TABLE resource_provider_aggregates (
  resource_provider_id  integer NOT NULL REFERENCES resource_providers(id),
  aggregate_id          integer NOT NULL REFERENCES placement_aggregates(id),
  PRIMARY KEY (resource_provider_id, aggregate_id)
);
CREATE INDEX resource_provider_aggregates_aggregate_id_idx ON resource_provider_aggregates(aggregate_id);

CREATE TABLE resource_provider_traits (
  resource_provider_id  integer NOT NULL REFERENCES resource_providers(id),
  trait_id              integer NOT NULL REFERENCES traits(id),
  PRIMARY KEY (resource_provider_id, trait_id)
);
CREATE INDEX resource_provider_traits_trait_id_idx ON resource_provider_traits(trait_id);

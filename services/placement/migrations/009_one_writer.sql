-- ONE writer of allocations (issue 17). placement_write() below is THE capacity and write rule:
-- every allocation write runs it (REST PUT /allocations/{c} and POST /allocations, the reshaper,
-- the gRPC Claim, ClaimMany, Move, Release, ClaimMove and RevertMove), and nothing else inserts
-- allocations or checks capacity for a write. Until this migration the rule lived twice: in the
-- TypeScript writer (REST, gRPC move and release) and in placement_claim (gRPC claims, written in
-- 004, rewritten in 005 and 006); 004-006 stay as history, this file holds the live definitions.
--
-- placement_write(consumers, projects, users, types, check_generation, generations,
--                 row_consumers, rp_uuids, rc_names, amounts) RETURNS integer[]
--   Replaces the allocations of every listed consumer, atomically. Consumers are parallel arrays
--   (project/user external ids, consumer type or NULL = leave it, expected generation or NULL =
--   must not exist, compared only when check_generation); allocation rows are parallel arrays,
--   row_consumers[i] the 1-based index of row i's consumer. A consumer with no row is emptied.
--   Returns each consumer's generation after the write (0: emptied, so deleted), in order.
--
--   1. names: providers, classes, projects, users, types looked up in one statement;
--   2. consumers, in uuid order (every writer's lock order: group lock, consumers, providers):
--      locked FOR UPDATE or created (project, user, type created when missing), generation
--      checked when asked (409 placement.concurrent_update), moved to the written project/user/type
--      (Placement's ensure_consumer runs before the providers are looked up, so these 409s come
--      before the 400s of step 3);
--   3. the first unknown provider, then the first unknown class, in the caller's order (400);
--   4. every provider whose usage changes (the new ones, those the consumers held) locked
--      FOR UPDATE in id order: writers serialize per provider, so the check of step 5 cannot be
--      raced and usage never exceeds capacity;
--   5. THE CAPACITY RULE, read under those locks, first failing row in the caller's order:
--      no inventory of the class on the provider, then min_unit / max_unit / step_size, then
--        used + amount <= (total - reserved) * allocation_ratio      (double precision)
--      where `used` is the provider's usage of the class without the written consumers' own
--      allocations and `amount` the running sum of the write's rows for that provider and class
--      (Placement's _check_capacity_exceeded). When a row fails, Placement's first check wins:
--      a provider with no inventory of ANY class the write names fails it naming all of them;
--   6. the write: old allocations deleted, new ones inserted; the generation of each provider
--      Placement's _set_allocations bumps, once: those of the new allocations and those an
--      emptied consumer held (its allocation list names them with used = 0). A provider a
--      consumer only moves away from keeps its generation (005/006 bumped it); each consumer
--      keeping allocations gets generation + 1 (a new one is inserted with 1), emptied consumers
--      are deleted (and their consumer_groups row with them).
--
--   Refusals (nothing written: the caller's statement or transaction is aborted) are raised as
--   'placement_claim:' || json, the prefix placement_claim_many(_in_groups) recognises, with
--   "kind": unknown_provider | unknown_class (+ "row"), generation (+ "expected", "got",
--   "consumer"), created_concurrently (+ "consumer"), no_inventory | constraints_violated |
--   capacity_exceeded (+ "row"; no_inventory of a bare provider adds "rows", the first row of each
--   bare provider, and "classes", the write's class names by id). Rows and consumers are 1-based
--   indexes into the caller's arrays; allocation-writer.ts words the errors.
--
-- Cost: a new consumer's claim runs the statements 006's placement_claim ran (6), with its
-- settings (generic plans, index probes) plus nested loops only: the generic plans of statements
-- over arrays of unknown length (several consumers) estimate ~1,000 rows, and the provider lock
-- then merge-joined every provider (measured 1.5 ms instead of 0.05 per claim); every table here
-- is read by key, a few rows at a time. The bare-provider check runs only on a refusal.
--
-- placement_claim (the gRPC claim's signature, used by placement_claim_many, the group functions
-- of 007 and the move functions of 008) is now placement_write for one consumer.

CREATE FUNCTION placement_write(
  p_consumers uuid[], p_projects text[], p_users text[], p_types text[],
  p_check_generation boolean, p_generations integer[],
  p_row_consumers integer[], p_rp_uuids uuid[], p_rc_names text[], p_amounts integer[]
) RETURNS integer[] LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_mergejoin = off SET enable_hashjoin = off AS $$
DECLARE
  n integer := coalesce(array_length(p_amounts, 1), 0);
  rp_ids integer[];
  rc_ids integer[];
  bad_rp integer;
  bad_rc integer;
  v_projects integer[];
  v_users integer[];
  v_types integer[];
  lock_order integer[];
  j integer;
  v_project integer;
  v_user integer;
  v_type integer;
  c consumers%ROWTYPE;
  generations integer[] := array_fill(0, ARRAY[coalesce(array_length(p_consumers, 1), 0)]);
  kept integer[] := '{}';
  emptied uuid[] := '{}';
  emptied_ids integer[] := '{}';
  bumped integer[];
  held boolean;
  bad integer;
  bad_kind text;
  bare integer[];
BEGIN
  -- 1. names, in the caller's order; the consumers' lock order
  -- NOTE: one consumer (every gRPC claim) takes 006's statement: no sorts of the consumer arrays
  IF cardinality(p_consumers) = 1 THEN
    SELECT coalesce(r.ids, '{}'), r.bad, coalesce(k.ids, '{}'), k.bad,
           ARRAY[(SELECT id FROM projects WHERE external_id = p_projects[1])], ARRAY[(SELECT id FROM users WHERE external_id = p_users[1])],
           ARRAY[CASE WHEN p_types[1] IS NULL THEN NULL ELSE (SELECT id FROM consumer_types WHERE name = p_types[1]) END], '{1}'
      INTO rp_ids, bad_rp, rc_ids, bad_rc, v_projects, v_users, v_types, lock_order
      FROM (SELECT array_agg(rp.id ORDER BY w.i) AS ids, min(w.i) FILTER (WHERE rp.id IS NULL) AS bad
              FROM unnest(p_rp_uuids) WITH ORDINALITY AS w(u, i) LEFT JOIN resource_providers rp ON rp.uuid = w.u) r,
           (SELECT array_agg(rc.id ORDER BY w.i) AS ids, min(w.i) FILTER (WHERE rc.id IS NULL) AS bad
              FROM unnest(p_rc_names) WITH ORDINALITY AS w(name, i) LEFT JOIN resource_classes rc ON rc.name = w.name) k;
  ELSE
    SELECT coalesce(r.ids, '{}'), r.bad, coalesce(k.ids, '{}'), k.bad, x.p, x.u, x.t, coalesce(x.ord, '{}')
      INTO rp_ids, bad_rp, rc_ids, bad_rc, v_projects, v_users, v_types, lock_order
      FROM (SELECT array_agg(rp.id ORDER BY w.i) AS ids, min(w.i) FILTER (WHERE rp.id IS NULL) AS bad
              FROM unnest(p_rp_uuids) WITH ORDINALITY AS w(u, i) LEFT JOIN resource_providers rp ON rp.uuid = w.u) r,
           (SELECT array_agg(rc.id ORDER BY w.i) AS ids, min(w.i) FILTER (WHERE rc.id IS NULL) AS bad
              FROM unnest(p_rc_names) WITH ORDINALITY AS w(name, i) LEFT JOIN resource_classes rc ON rc.name = w.name) k,
           (SELECT array_agg((SELECT id FROM projects WHERE external_id = w.p) ORDER BY w.i) AS p,
                   array_agg((SELECT id FROM users WHERE external_id = w.u) ORDER BY w.i) AS u,
                   array_agg(CASE WHEN w.t IS NULL THEN NULL ELSE (SELECT id FROM consumer_types WHERE name = w.t) END ORDER BY w.i) AS t,
                   array_agg(w.i::integer ORDER BY w.c, w.i) AS ord
              FROM unnest(p_consumers, p_projects, p_users, p_types) WITH ORDINALITY AS w(c, p, u, t, i)) x;
  END IF;

  -- 2. the consumers, in uuid order
  FOREACH j IN ARRAY lock_order LOOP
    v_project := v_projects[j];
    v_user := v_users[j];
    v_type := v_types[j];
    IF v_project IS NULL THEN
      INSERT INTO projects (external_id) VALUES (p_projects[j]) ON CONFLICT (external_id) DO NOTHING RETURNING id INTO v_project;
      IF v_project IS NULL THEN SELECT id INTO v_project FROM projects WHERE external_id = p_projects[j]; END IF;
    END IF;
    IF v_user IS NULL THEN
      INSERT INTO users (external_id) VALUES (p_users[j]) ON CONFLICT (external_id) DO NOTHING RETURNING id INTO v_user;
      IF v_user IS NULL THEN SELECT id INTO v_user FROM users WHERE external_id = p_users[j]; END IF;
    END IF;
    IF p_types[j] IS NOT NULL AND v_type IS NULL THEN
      INSERT INTO consumer_types (name) VALUES (p_types[j]) ON CONFLICT (name) DO NOTHING RETURNING id INTO v_type;
      IF v_type IS NULL THEN SELECT id INTO v_type FROM consumer_types WHERE name = p_types[j]; END IF;
    END IF;
    SELECT * INTO c FROM consumers WHERE uuid = p_consumers[j] FOR UPDATE;
    IF NOT FOUND THEN
      IF p_check_generation AND p_generations[j] IS NOT NULL THEN
        RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'generation', 'expected', NULL, 'got', p_generations[j], 'consumer', j);
      END IF;
      -- NOTE: inserted with the generation it has after the write (1); an emptied one is deleted below
      INSERT INTO consumers (uuid, project_id, user_id, consumer_type_id, generation, updated_at)
        VALUES (p_consumers[j], v_project, v_user, v_type, 1, now())
        ON CONFLICT (uuid) DO NOTHING RETURNING * INTO c;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'created_concurrently', 'consumer', j);
      END IF;
      generations[j] := 1;
    ELSE
      IF p_check_generation AND c.generation IS DISTINCT FROM p_generations[j] THEN
        RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'generation', 'expected', c.generation, 'got', p_generations[j], 'consumer', j);
      END IF;
      IF c.project_id <> v_project OR c.user_id <> v_user OR (v_type IS NOT NULL AND v_type IS DISTINCT FROM c.consumer_type_id) THEN
        UPDATE consumers SET project_id = v_project, user_id = v_user, consumer_type_id = COALESCE(v_type, consumer_type_id), updated_at = now()
          WHERE id = c.id;
      END IF;
      generations[j] := c.generation + 1;
      kept := kept || c.id;
    END IF;
    IF n = 0 OR NOT (j = ANY(p_row_consumers)) THEN
      emptied := emptied || p_consumers[j];
      emptied_ids := emptied_ids || c.id;
      generations[j] := 0;
      kept := array_remove(kept, c.id);
    END IF;
  END LOOP;

  -- 3. unknown names (400), after the consumers' checks as in Placement
  IF bad_rp IS NOT NULL THEN
    RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'unknown_provider', 'row', bad_rp);
  END IF;
  IF bad_rc IS NOT NULL THEN
    RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'unknown_class', 'row', bad_rc);
  END IF;

  -- 4. every provider whose usage changes, locked in id order; which of them are bumped; whether
  --    the consumers hold allocations (read under their locks)
  IF cardinality(p_consumers) = 1 THEN
    -- NOTE: 006's statement for one consumer; bumped: the new providers, or all it held when emptied
    WITH h AS (SELECT DISTINCT resource_provider_id AS id FROM allocations WHERE consumer_id = p_consumers[1])
    SELECT coalesce(array_agg(l.id ORDER BY l.id) FILTER (WHERE n = 0 OR l.id = ANY(rp_ids)), '{}'), EXISTS (SELECT FROM h) INTO bumped, held FROM (
      SELECT id FROM resource_providers WHERE id IN (SELECT unnest(rp_ids) UNION SELECT id FROM h)
      ORDER BY id FOR UPDATE) l;
  ELSE
    -- NOTE: driven by unnest (estimated 10 rows), not `consumer_id = ANY(...)`, whose generic plan
    -- estimated ~1,400 rows and merge-joined every provider (1.5 ms instead of 0.05)
    WITH h AS (SELECT DISTINCT a.resource_provider_id AS id, a.consumer_id FROM unnest(p_consumers) AS pc(u) JOIN allocations a ON a.consumer_id = pc.u)
    SELECT coalesce(array_agg(l.id ORDER BY l.id) FILTER (WHERE l.bump), '{}'), EXISTS (SELECT FROM h) INTO bumped, held FROM (
      SELECT rp.id, (rp.id = ANY(rp_ids) OR rp.id IN (SELECT h.id FROM h WHERE h.consumer_id = ANY(emptied))) AS bump
        FROM resource_providers rp WHERE rp.id IN (SELECT unnest(rp_ids) UNION SELECT h.id FROM h)
       ORDER BY rp.id FOR UPDATE OF rp) l;
  END IF;

  -- 5. the capacity rule (see the header), first failing row in the caller's order
  IF n > 0 THEN
    SELECT w.i, CASE
        WHEN inv.resource_provider_id IS NULL THEN 'no_inventory'
        WHEN w.amount < inv.min_unit OR w.amount > inv.max_unit OR w.amount % inv.step_size <> 0 THEN 'constraints_violated'
        WHEN (coalesce(u.used, 0) + w.so_far)::double precision > (inv.total - inv.reserved)::double precision * inv.allocation_ratio
          THEN 'capacity_exceeded' END
      INTO bad, bad_kind
      FROM (SELECT s.i, rp_ids[s.i] AS rp, rc_ids[s.i] AS rc, s.amount,
                   sum(s.amount) OVER (PARTITION BY rp_ids[s.i], rc_ids[s.i] ORDER BY s.i) AS so_far
              FROM unnest(p_amounts) WITH ORDINALITY AS s(amount, i)) w
      LEFT JOIN inventories inv ON inv.resource_provider_id = w.rp AND inv.resource_class_id = w.rc
      LEFT JOIN LATERAL (SELECT sum(a.used) AS used FROM allocations a
                          WHERE a.resource_provider_id = w.rp AND a.resource_class_id = w.rc AND a.consumer_id <> ALL(p_consumers)) u ON true
      WHERE inv.resource_provider_id IS NULL
         OR w.amount < inv.min_unit OR w.amount > inv.max_unit OR w.amount % inv.step_size <> 0
         OR (coalesce(u.used, 0) + w.so_far)::double precision > (inv.total - inv.reserved)::double precision * inv.allocation_ratio
      ORDER BY w.i LIMIT 1;
    IF bad IS NOT NULL THEN
      -- NOTE: only on a refusal: a bare provider implies a row without inventory, so a failing row
      SELECT array_agg(b.i ORDER BY b.i) INTO bare FROM (
        SELECT min(s.i) AS i FROM unnest(rp_ids) WITH ORDINALITY AS s(rp, i)
         WHERE NOT EXISTS (SELECT FROM inventories inv WHERE inv.resource_provider_id = s.rp AND inv.resource_class_id = ANY(rc_ids))
         GROUP BY s.rp) b;
      IF bare IS NOT NULL THEN
        RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'no_inventory', 'row', bare[1], 'rows', bare,
          'classes', (SELECT array_agg(name::text ORDER BY id) FROM resource_classes WHERE id = ANY(rc_ids)));
      END IF;
      RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', bad_kind, 'row', bad);
    END IF;
  END IF;

  -- 6. the write
  IF held THEN
    -- NOTE: only when they hold some: a DELETE of nothing still fires the change-log trigger
    DELETE FROM allocations WHERE consumer_id = ANY(p_consumers);
  END IF;
  IF n = 0 THEN
    IF cardinality(bumped) > 0 THEN
      UPDATE resource_providers SET generation = generation + 1, updated_at = now() WHERE id = ANY(bumped);
    END IF;
  ELSIF cardinality(kept) = 0 THEN
    WITH ins AS (INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used)
                   SELECT rp_ids[s.i], p_consumers[p_row_consumers[s.i]], rc_ids[s.i], s.amount FROM unnest(p_amounts) WITH ORDINALITY AS s(amount, i))
    UPDATE resource_providers SET generation = generation + 1, updated_at = now() WHERE id = ANY(bumped);
  ELSE
    WITH ins AS (INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used)
                   SELECT rp_ids[s.i], p_consumers[p_row_consumers[s.i]], rc_ids[s.i], s.amount FROM unnest(p_amounts) WITH ORDINALITY AS s(amount, i)),
         rpg AS (UPDATE resource_providers SET generation = generation + 1, updated_at = now() WHERE id = ANY(bumped))
    UPDATE consumers SET generation = generation + 1, updated_at = now() WHERE id = ANY(kept);
  END IF;
  IF cardinality(emptied_ids) > 0 THEN
    DELETE FROM consumers WHERE id = ANY(emptied_ids);
  END IF;
  RETURN generations;
END $$;

-- The gRPC claim's signature (placement_claim_many and the functions of 007 and 008 call it):
-- placement_write for one consumer. No settings of its own, so its one expression is evaluated
-- without a plan switch; placement_write's statements run with placement_write's settings.
CREATE OR REPLACE FUNCTION placement_claim(
  p_consumer uuid, p_project text, p_user text, p_type text,
  p_check_generation boolean, p_generation integer,
  p_rp_uuids uuid[], p_rc_names text[], p_amounts integer[]
) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
  RETURN (placement_write(ARRAY[p_consumer], ARRAY[p_project], ARRAY[p_user], ARRAY[p_type], p_check_generation, ARRAY[p_generation],
    array_fill(1, ARRAY[coalesce(array_length(p_amounts, 1), 0)]), p_rp_uuids, p_rc_names, p_amounts))[1];
END $$;

-- The gRPC Claim (one consumer, the scheduler's hot path) in ONE round trip: the same steps,
-- checks, locks, error precedence and writes as the allocation writer
-- (src/adapters/sql/allocation-writer.ts, writeAllocationsIn) for a single consumer, run
-- server-side. Each statement below takes its own snapshot (READ COMMITTED, volatile
-- function), so usage is read after the provider locks are held, as in the writer.
--
-- Outcome: the consumer's generation after the write. An expected refusal raises P0001 with
-- a message 'placement_claim:{json}' (kind + index of the offending allocation row), so the
-- whole call writes nothing; the caller maps it to the writer's errors.
--
-- The capacity rule is capacityOf() of src/domain/capacity.ts: (total - reserved) *
-- allocation_ratio in double precision (allocation_ratio is double precision, so this is the
-- same IEEE arithmetic as JavaScript's), compared with used + amount.

CREATE FUNCTION placement_claim(
  p_consumer uuid, p_project text, p_user text, p_type text,
  p_check_generation boolean, p_generation integer,
  p_rp_uuids uuid[], p_rc_names text[], p_amounts integer[]
) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  n integer := coalesce(array_length(p_amounts, 1), 0);
  rp_ids integer[];
  rc_ids integer[];
  bad integer;
  v_project integer;
  v_user integer;
  v_type integer;
  c consumers%ROWTYPE;
  locked integer[];
  inv inventories%ROWTYPE;
  v_used bigint;
  v_sum bigint;
  v_generation integer;
BEGIN
  -- 1. providers, then classes (400), first unknown one in the caller's order
  SELECT array_agg(rp.id ORDER BY w.i), min(w.i) FILTER (WHERE rp.id IS NULL) INTO rp_ids, bad
    FROM unnest(p_rp_uuids) WITH ORDINALITY AS w(u, i) LEFT JOIN resource_providers rp ON rp.uuid = w.u;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'unknown_provider', 'row', bad);
  END IF;
  SELECT array_agg(rc.id ORDER BY w.i), min(w.i) FILTER (WHERE rc.id IS NULL) INTO rc_ids, bad
    FROM unnest(p_rc_names) WITH ORDINALITY AS w(name, i) LEFT JOIN resource_classes rc ON rc.name = w.name;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'unknown_class', 'row', bad);
  END IF;

  -- 2. project, user and type (created when missing; a concurrent creator wins)
  SELECT id INTO v_project FROM projects WHERE external_id = p_project;
  IF v_project IS NULL THEN
    INSERT INTO projects (external_id) VALUES (p_project) ON CONFLICT (external_id) DO NOTHING RETURNING id INTO v_project;
    IF v_project IS NULL THEN SELECT id INTO v_project FROM projects WHERE external_id = p_project; END IF;
  END IF;
  SELECT id INTO v_user FROM users WHERE external_id = p_user;
  IF v_user IS NULL THEN
    INSERT INTO users (external_id) VALUES (p_user) ON CONFLICT (external_id) DO NOTHING RETURNING id INTO v_user;
    IF v_user IS NULL THEN SELECT id INTO v_user FROM users WHERE external_id = p_user; END IF;
  END IF;
  IF p_type IS NOT NULL THEN
    SELECT id INTO v_type FROM consumer_types WHERE name = p_type;
    IF v_type IS NULL THEN
      INSERT INTO consumer_types (name) VALUES (p_type) ON CONFLICT (name) DO NOTHING RETURNING id INTO v_type;
      IF v_type IS NULL THEN SELECT id INTO v_type FROM consumer_types WHERE name = p_type; END IF;
    END IF;
  END IF;

  -- 3. the consumer, locked (or created), its generation checked when asked
  SELECT * INTO c FROM consumers WHERE uuid = p_consumer FOR UPDATE;
  IF NOT FOUND THEN
    IF p_check_generation AND p_generation IS NOT NULL THEN
      RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'generation', 'expected', NULL, 'got', p_generation);
    END IF;
    INSERT INTO consumers (uuid, project_id, user_id, consumer_type_id) VALUES (p_consumer, v_project, v_user, v_type)
      ON CONFLICT (uuid) DO NOTHING RETURNING * INTO c;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'created_concurrently');
    END IF;
  ELSE
    IF p_check_generation AND c.generation IS DISTINCT FROM p_generation THEN
      RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'generation', 'expected', c.generation, 'got', p_generation);
    END IF;
    IF c.project_id <> v_project OR c.user_id <> v_user OR (v_type IS NOT NULL AND v_type IS DISTINCT FROM c.consumer_type_id) THEN
      UPDATE consumers SET project_id = v_project, user_id = v_user, consumer_type_id = COALESCE(v_type, consumer_type_id), updated_at = now()
        WHERE id = c.id;
    END IF;
  END IF;

  -- 4. every provider whose usage changes (new ones, the consumer's old ones), locked in id order
  SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO locked FROM (
    SELECT id FROM resource_providers WHERE id IN (SELECT unnest(rp_ids) UNION SELECT resource_provider_id FROM allocations WHERE consumer_id = p_consumer)
    ORDER BY id FOR UPDATE) l;

  -- 5. per row, in order: inventory, units, capacity (usage without the consumer's own allocations)
  FOR i IN 1 .. n LOOP
    SELECT * INTO inv FROM inventories WHERE resource_provider_id = rp_ids[i] AND resource_class_id = rc_ids[i];
    IF NOT FOUND THEN
      RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'no_inventory', 'row', i);
    END IF;
    IF p_amounts[i] < inv.min_unit OR p_amounts[i] > inv.max_unit OR p_amounts[i] % inv.step_size <> 0 THEN
      RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'constraints_violated', 'row', i);
    END IF;
    SELECT coalesce(sum(used), 0) INTO v_used FROM allocations
      WHERE resource_provider_id = rp_ids[i] AND resource_class_id = rc_ids[i] AND consumer_id <> p_consumer;
    SELECT sum(p_amounts[j]) INTO v_sum FROM generate_series(1, i) AS j WHERE rp_ids[j] = rp_ids[i] AND rc_ids[j] = rc_ids[i];
    IF (v_used + v_sum)::double precision > (inv.total - inv.reserved)::double precision * inv.allocation_ratio THEN
      RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'capacity_exceeded', 'row', i);
    END IF;
  END LOOP;

  -- 6. the write: replace the allocations, bump generations (a consumer left with none is deleted)
  DELETE FROM allocations WHERE consumer_id = p_consumer;
  IF n = 0 THEN
    UPDATE resource_providers SET generation = generation + 1, updated_at = now() WHERE id = ANY(locked);
    DELETE FROM consumers WHERE id = c.id;
    RETURN 0;
  END IF;
  INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used)
    SELECT rp_ids[i], p_consumer, rc_ids[i], p_amounts[i] FROM generate_series(1, n) AS i;
  UPDATE resource_providers SET generation = generation + 1, updated_at = now() WHERE id = ANY(locked);
  UPDATE consumers SET generation = generation + 1, updated_at = now() WHERE id = c.id RETURNING generation INTO v_generation;
  RETURN v_generation;
END $$;

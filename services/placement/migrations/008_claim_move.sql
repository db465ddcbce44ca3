-- Moves (gRPC ClaimMove / RevertMove, PlacementService 1.2): the source-to-migration swap and the
-- destination claim as ONE transaction (Nova does them in two writes, leaving the instance with
-- no allocation for a moment). Both are built on placement_claim, so capacity, locks, errors and
-- generations are exactly the claim's; neither re-states the capacity rule.

-- A consumer's allocations as placement_claim's parallel arrays (providers by uuid, classes by name).
CREATE FUNCTION placement_consumer_rows(p_consumer uuid, OUT rp_uuids uuid[], OUT rc_names text[], OUT amounts integer[])
LANGUAGE sql STABLE AS $$
  SELECT coalesce(array_agg(rp.uuid ORDER BY a.id), '{}'), coalesce(array_agg(rc.name::text ORDER BY a.id), '{}'),
         coalesce(array_agg(a.used ORDER BY a.id), '{}')
    FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id JOIN resource_classes rc ON rc.id = a.resource_class_id
   WHERE a.consumer_id = p_consumer
$$;

-- ClaimMove: if the migration holds nothing yet, the instance's current allocations become the
-- migration's; the instance's allocations become p_rp_uuids/p_rc_names/p_amounts (the destination).
-- Order inside the transaction: the instance's claim first (it frees the source amounts and
-- locks the source providers with the destination's), then the migration's claim of the source
-- rows, which therefore finds exactly the room the instance left. With a group (p_group not
-- NULL) the instance's claim is placement_claim_in_group's (group lock first, policy checked).
-- Returns the instance consumer's generation and whether this call moved the source.
CREATE FUNCTION placement_claim_move(
  p_instance uuid, p_migration uuid, p_project text, p_user text,
  p_rp_uuids uuid[], p_rc_names text[], p_amounts integer[],
  p_group uuid, p_policy text, p_max integer,
  OUT generation integer, OUT source_moved boolean
) LANGUAGE plpgsql AS $$
DECLARE
  src record;
  held boolean;
BEGIN
  IF coalesce(array_length(p_amounts, 1), 0) = 0 THEN
    RAISE EXCEPTION 'placement_claim_move: the destination allocations must not be empty' USING ERRCODE = '22023';
  END IF;
  IF p_group IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(hashtextextended('cellsched.placement.group:' || p_group::text, 0));
  END IF;
  -- the two consumers in uuid order, like every writer (no deadlock among movers of one instance)
  PERFORM 1 FROM consumers WHERE uuid IN (p_instance, p_migration) ORDER BY uuid FOR UPDATE;
  SELECT EXISTS (SELECT FROM allocations WHERE consumer_id = p_migration) INTO held;
  SELECT * INTO src FROM placement_consumer_rows(p_instance);
  IF p_group IS NULL THEN
    generation := placement_claim(p_instance, p_project, p_user, NULL, false, NULL, p_rp_uuids, p_rc_names, p_amounts);
  ELSE
    generation := placement_claim_in_group(p_group, p_policy, p_max, p_instance, p_project, p_user, NULL, false, NULL,
      p_rp_uuids, p_rc_names, p_amounts);
  END IF;
  source_moved := NOT held AND coalesce(array_length(src.amounts, 1), 0) > 0;
  IF source_moved THEN
    PERFORM placement_claim(p_migration, p_project, p_user, NULL, false, NULL, src.rp_uuids, src.rc_names, src.amounts);
  END IF;
END $$;

-- RevertMove: the migration's allocations become the instance's again and the migration holds
-- nothing. The migration's release first (it locks the source providers), then the instance's
-- claim of the source rows (which frees the destination). A migration holding nothing changes
-- nothing (false). The instance keeps its consumer's project and user.
CREATE FUNCTION placement_revert_move(p_instance uuid, p_migration uuid) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  src record;
  v_project text;
  v_user text;
BEGIN
  PERFORM 1 FROM consumers WHERE uuid IN (p_instance, p_migration) ORDER BY uuid FOR UPDATE;
  SELECT * INTO src FROM placement_consumer_rows(p_migration);
  IF coalesce(array_length(src.amounts, 1), 0) = 0 THEN
    RETURN false;
  END IF;
  SELECT p.external_id, u.external_id INTO v_project, v_user
    FROM consumers c JOIN projects p ON p.id = c.project_id JOIN users u ON u.id = c.user_id
   WHERE c.uuid IN (p_instance, p_migration) ORDER BY (c.uuid = p_instance) DESC LIMIT 1;
  PERFORM placement_claim(p_migration, v_project, v_user, NULL, false, NULL, '{}', '{}', '{}');
  PERFORM placement_claim(p_instance, v_project, v_user, NULL, false, NULL, src.rp_uuids, src.rc_names, src.amounts);
  RETURN true;
END $$;

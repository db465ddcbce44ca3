-- Server-group policies enforced at claim time (the gRPC Claim and ClaimMany with a group).
--
-- Why here: the scheduler serializes decisions per group with a lock in the API database, but a
-- cell conductor's in-cell reschedule cannot reach that database (no upcall), so an alternate
-- taken meanwhile by another member of an anti-affinity group would still be claimed. Both claim
-- through placement, so placement checks the policy inside the claim's own transaction.
--
-- 1. consumer_groups: the server group each consumer claimed with (only the enforced policies,
--    affinity and anti-affinity). A row lives as long as its consumer: the foreign key deletes it
--    with the consumer, whichever path deletes it (a claim of nothing, DELETE /allocations, the
--    gRPC Release, the writer when a consumer is left with nothing, TRUNCATE ... CASCADE).
-- 2. placement_claim_in_group: placement_claim (006, unchanged) for a member of a group, under a
--    transaction-scoped advisory lock on the group (so a group's claims are checked one at a
--    time, on every placement process), followed by the policy check against the other members'
--    allocations as they are now: anti-affinity: fewer than max_server_per_host other members on
--    each compute node (root provider) the claim uses; affinity: no other member on any other
--    compute node. A claim the policy forbids raises the refusal 'placement_claim:{"kind":
--    "group_policy", ...}', so nothing of it is written. The claim's own refusals (unknown names,
--    generation, capacity) come first, exactly as placement_claim answers them.
-- 3. placement_claim_many_in_groups: placement_claim_many (006, unchanged) for batches in which
--    at least one claim has a group ("gu", "gp", "gm" keys); the batcher sends a batch without
--    any group to placement_claim_many as before.
--
-- A claim without a group runs exactly the statements it ran before (placement_claim and
-- placement_claim_many are not touched); it neither reads nor writes consumer_groups, and leaves
-- a consumer's existing group row alone. The only cost added to it is the foreign key's trigger
-- on consumers: a DELETE of a consumer also deletes its group row (an index probe), and an UPDATE
-- checks that the uuid did not change.
--
-- A provider with the trait MISC_SHARES_VIA_AGGREGATE (a sharing provider) names no compute node:
-- members sharing a storage pool are not "on the same host".

CREATE TABLE consumer_groups (
  consumer_uuid        uuid PRIMARY KEY REFERENCES consumers(uuid) ON DELETE CASCADE,
  group_uuid           uuid NOT NULL,
  policy               text NOT NULL CHECK (policy IN ('affinity', 'anti-affinity')),
  max_server_per_host  integer NOT NULL DEFAULT 1 CHECK (max_server_per_host >= 1),
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz
);
CREATE INDEX consumer_groups_group_uuid_idx ON consumer_groups(group_uuid);

CREATE FUNCTION placement_claim_in_group(
  p_group uuid, p_policy text, p_max integer,
  p_consumer uuid, p_project text, p_user text, p_type text,
  p_check_generation boolean, p_generation integer,
  p_rp_uuids uuid[], p_rc_names text[], p_amounts integer[]
) RETURNS integer LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
  v_generation integer;
  b record;
BEGIN
  IF p_policy NOT IN ('affinity', 'anti-affinity') OR p_max IS NULL OR p_max < 1 THEN
    RAISE EXCEPTION 'placement_claim_in_group: policy % with max_server_per_host % is not enforced', p_policy, p_max USING ERRCODE = '22023';
  END IF;
  -- 1. the group's claims one at a time, whichever placement process runs them; taken before the
  --    consumer and provider locks (every writer's order: group, consumers, providers), held to
  --    the end of the transaction, so the next claim of the group sees this one committed
  PERFORM pg_advisory_xact_lock(hashtextextended('cellsched.placement.group:' || p_group::text, 0));
  -- 2. the claim itself, with its own refusals first
  v_generation := placement_claim(p_consumer, p_project, p_user, p_type, p_check_generation, p_generation, p_rp_uuids, p_rc_names, p_amounts);
  IF v_generation = 0 THEN
    RETURN 0; -- a claim of nothing: the consumer is gone, and its group row with it
  END IF;
  -- 3. the policy, against the other members' allocations as committed before the lock was ours: the
  --    first other member (in root provider order) that breaks it, by compute node (root provider)
  -- NOTE: in this function, not in a SQL function of its own: PL/pgSQL keeps the statement's plan for
  --    the session; a SQL function's statements are planned again on every call (2x the group path's cost).
  WITH share AS (SELECT id FROM traits WHERE name = 'MISC_SHARES_VIA_AGGREGATE'),
  targets AS (
    SELECT DISTINCT rp.root_provider_id AS root FROM unnest(p_rp_uuids) AS w(u) JOIN resource_providers rp ON rp.uuid = w.u
     WHERE NOT EXISTS (SELECT FROM resource_provider_traits t WHERE t.resource_provider_id = rp.id AND t.trait_id = (SELECT id FROM share))),
  held AS (
    SELECT rp.root_provider_id AS root, count(DISTINCT g.consumer_uuid)::integer AS n, min(g.consumer_uuid::text)::uuid AS member
      FROM consumer_groups g
      JOIN allocations a ON a.consumer_id = g.consumer_uuid
      JOIN resource_providers rp ON rp.id = a.resource_provider_id
     WHERE g.group_uuid = p_group AND g.consumer_uuid <> p_consumer
       AND NOT EXISTS (SELECT FROM resource_provider_traits t WHERE t.resource_provider_id = rp.id AND t.trait_id = (SELECT id FROM share))
     GROUP BY rp.root_provider_id)
  SELECT r.uuid AS root_uuid, r.name::text AS root_name, h.n AS members, h.member INTO b
    FROM held h JOIN resource_providers r ON r.id = h.root
   WHERE (p_policy = 'anti-affinity' AND h.n >= p_max AND EXISTS (SELECT FROM targets t WHERE t.root = h.root))
      OR (p_policy = 'affinity' AND NOT EXISTS (SELECT FROM targets t WHERE t.root = h.root))
   ORDER BY h.root LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'placement_claim:%', json_build_object('kind', 'group_policy', 'group', p_group, 'policy', p_policy,
      'max', p_max, 'root', b.root_uuid, 'root_name', b.root_name, 'members', b.members, 'member', b.member);
  END IF;
  -- 4. the membership, remembered while the consumer lives
  INSERT INTO consumer_groups (consumer_uuid, group_uuid, policy, max_server_per_host) VALUES (p_consumer, p_group, p_policy, p_max)
    ON CONFLICT (consumer_uuid) DO UPDATE SET group_uuid = EXCLUDED.group_uuid, policy = EXCLUDED.policy,
      max_server_per_host = EXCLUDED.max_server_per_host, updated_at = now()
    WHERE (consumer_groups.group_uuid, consumer_groups.policy, consumer_groups.max_server_per_host)
      IS DISTINCT FROM (EXCLUDED.group_uuid, EXCLUDED.policy, EXCLUDED.max_server_per_host);
  RETURN v_generation;
END $$;

-- placement_claim_many (006) for a batch holding claims with a group: the same loop,
-- subtransactions and answers; a claim with "gu" (group uuid), "gp" (policy) and "gm"
-- (max_server_per_host) goes through placement_claim_in_group, one without through placement_claim.
CREATE FUNCTION placement_claim_many_in_groups(p_claims jsonb)
RETURNS TABLE (i integer, generation integer, refusal text, error_state text, error_message text) LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
  claim jsonb;
  k integer := 0;
  v_state text;
  v_message text;
BEGIN
  FOR claim IN SELECT value FROM jsonb_array_elements(p_claims) LOOP
    k := k + 1;
    i := k;
    generation := NULL;
    refusal := NULL;
    error_state := NULL;
    error_message := NULL;
    BEGIN
      SELECT CASE WHEN x.gu IS NULL THEN placement_claim(x.c, x.p, x.u, x.t, x.cg, x.g, x.rp, x.rc, x.n)
                  ELSE placement_claim_in_group(x.gu, x.gp, x.gm, x.c, x.p, x.u, x.t, x.cg, x.g, x.rp, x.rc, x.n) END
        INTO generation
        FROM jsonb_to_record(claim) AS x(c uuid, p text, u text, t text, cg boolean, g integer, rp uuid[], rc text[], n integer[],
                                         gu uuid, gp text, gm integer);
    EXCEPTION
      -- the whole batch is retried: a deadlock or serialization failure, or the session ending
      WHEN deadlock_detected OR serialization_failure OR query_canceled OR admin_shutdown THEN
        RAISE;
      WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT;
        IF v_state = 'P0001' AND v_message LIKE 'placement_claim:%' THEN
          refusal := substr(v_message, length('placement_claim:') + 1);
        ELSE
          error_state := v_state;
          error_message := v_message;
        END IF;
    END;
    RETURN NEXT;
  END LOOP;
END $$;

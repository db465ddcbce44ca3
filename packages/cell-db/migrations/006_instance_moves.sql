-- Moves and lifecycle actions (issue 13): what the cell conductor's state machines need to be
-- durable, so a conductor restart, a redelivered cast or the step watchdog picks an action up
-- where it was, without any message to copy it from and without asking the API level.
--
-- 1. Nova's instance_extra.old_flavor / new_flavor: during a resize the instance keeps the flavor
--    it runs with in `flavor`; `new_flavor` is the one it is being resized to (a migrate: the same),
--    `old_flavor` the one it had. finish_resize makes `flavor` the new one; a revert puts
--    `old_flavor` back; confirm and revert clear both. They outlive the action (VERIFY_RESIZE waits
--    for the user with no task in progress), hence on the instance and not in instance_tasks.
ALTER TABLE instances ADD COLUMN old_flavor jsonb;
ALTER TABLE instances ADD COLUMN new_flavor jsonb;

-- 2. One row per instance with an action in progress in its cell (beyond Nova, whose compute
--    managers keep this in memory and in RPC arguments): the state machine's state. Created when the
--    cell conductor takes the action (instance_action), advanced on each step result, deleted when the
--    action ends (success or failure). Every change is guarded on (request_id, step, step_host,
--    attempt) under the instance's row lock, so a late or repeated step result changes nothing.
--   request_id      the action's request (its instance action; events are recorded under it)
--   action          Nova's instance action name ('stop', 'migrate', 'live-migration', ...)
--   step            the compute step in flight (InstanceStepRequest.step: 'power_off', 'prep_resize', ...)
--   step_host       the host it was cast to
--   attempt         which destination of the host list (moves, unshelve; 1 = the scheduler's choice)
--   deadline_at     the step watchdog's deadline: no result by then = the step failed
--   entered_by      what cast the current step: 'action', or '<step>@<host>#<attempt>' of the result
--                   that advanced to it; a redelivery of that message casts the step again (the
--                   cast after the commit may have been lost) instead of deciding anew
--   migration_uuid  the move's migration record (also its placement consumer)
--   host_list       the alternates not tried yet (wire Selection JSON, in order)
--   request_spec    the RequestSpec the alternates are claimed with (its server group)
--   params          the action's arguments: reboot_type, image_ref, display_name
--   prior_vm_state  vm_state before the action: a failed action puts it back
--   failure         set once a move is rolling back: why it failed (the fault written at the end)
--   trace_parent    W3C traceparent of the action, so the watchdog's verdict joins its trace
CREATE TABLE instance_tasks (
  instance_uuid  uuid PRIMARY KEY REFERENCES instances (uuid) ON DELETE CASCADE,
  request_id     text NOT NULL,
  action         text NOT NULL,
  step           text NOT NULL,
  step_host      text NOT NULL,
  attempt        integer NOT NULL DEFAULT 1 CHECK (attempt >= 1),
  deadline_at    timestamptz NOT NULL,
  entered_by     text NOT NULL DEFAULT 'action',
  migration_uuid uuid,
  host_list      jsonb NOT NULL DEFAULT '[]'::jsonb,
  request_spec   jsonb,
  params         jsonb NOT NULL DEFAULT '{}'::jsonb,
  prior_vm_state text NOT NULL,
  failure        text,
  trace_parent   text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX instance_tasks_deadline_idx ON instance_tasks (deadline_at);
CREATE INDEX instance_tasks_step_host_idx ON instance_tasks (step_host);

-- 3. Migrations the conductor's periodic passes look for: evacuations 'done' whose source host is
--    heard from again (destroy_evacuated), resizes 'finished' past resize_confirm_window (auto-confirm),
--    and in-progress migrations of deleted instances (their consumer released).
CREATE INDEX migrations_status_changed_idx ON migrations (status, updated_at) WHERE deleted_at IS NULL;

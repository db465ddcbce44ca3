-- A server action accepted by the API and not yet applied to the instance's cell (the API never
-- writes a cell DB). The API inserts one row per action before it casts `server_action` to the
-- super-conductor: the server view shows `task_state` at once, a second action on the same
-- server meets the row and answers 409, and the API's sweeper re-casts rows whose cast was lost.
-- The super-conductor deletes the row (by instance and request) once the cell holds the action's
-- state, or once it refused the action.
CREATE TABLE server_task_intents (
  instance_uuid uuid PRIMARY KEY,
  -- Nova's instance action name ("stop", "resize", ...).
  action        text NOT NULL,
  -- The task_state the action sets at once; NULL for one that sets none (confirmResize).
  task_state    text,
  request_id    text NOT NULL,
  -- The wire ServerActionRequest the API cast (JSON), re-cast as is by the sweeper.
  request       jsonb NOT NULL,
  -- The W3C traceparent of the API request, so a re-cast stays in its trace.
  trace_parent  text,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX server_task_intents_created_at_idx ON server_task_intents (created_at);

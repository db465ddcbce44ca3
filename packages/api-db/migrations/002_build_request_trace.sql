-- The W3C traceparent of the create that made the build request: when the API's sweeper
-- re-casts a build request whose cast was lost, the re-cast (and so the whole build) stays in
-- the create's trace instead of starting a new one. NULL when tracing was off.
ALTER TABLE build_requests ADD COLUMN trace_parent text;

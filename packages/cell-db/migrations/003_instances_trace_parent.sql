-- The W3C traceparent of the create that placed the instance (saved by the super-conductor),
-- so work resumed without a message (the build watchdog's retry) stays in that trace.
ALTER TABLE instances ADD COLUMN trace_parent text;

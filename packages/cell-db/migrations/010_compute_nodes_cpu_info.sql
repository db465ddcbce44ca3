-- Nova's compute_nodes.cpu_info: the node's CPU as the compute reports it (JSON text: arch, model,
-- vendor, topology, features), shown by os-hypervisors (below 2.88) as Nova does.
ALTER TABLE compute_nodes ADD COLUMN cpu_info text NOT NULL DEFAULT '{}';

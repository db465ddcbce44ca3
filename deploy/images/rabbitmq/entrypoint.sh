#!/bin/sh
# The broker's configuration from the environment (an administrator for the compose init,
# reachable from other containers), then RabbitMQ in the foreground. The node name stays
# rabbit@<hostname>: compose fixes the hostname, so the data in the volume is found again.
set -eu
cat > /etc/rabbitmq/rabbitmq.conf <<CONF
loopback_users = none
default_user = ${RABBITMQ_DEFAULT_USER:?RABBITMQ_DEFAULT_USER is required}
default_pass = ${RABBITMQ_DEFAULT_PASS:?RABBITMQ_DEFAULT_PASS is required}
default_user_tags.administrator = true
default_permissions.configure = .*
default_permissions.read = .*
default_permissions.write = .*
listeners.tcp.default = 5672
management.tcp.port = 15672
CONF
exec "$@"

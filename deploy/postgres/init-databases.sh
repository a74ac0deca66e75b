#!/bin/sh
# Run once by the postgres image on an empty data volume (/docker-entrypoint-initdb.d).
#
# One role and one database per Mithril store, each role owning only its own database
# (least privilege: the gateway cannot read the memory ledger, and so on). The services
# create their tables themselves on start, so each role owns its database's public schema.
# Passwords come from the environment (deploy/compose.yaml passes them through).
set -eu

create_store() {
    role="$1"
    password="$2"
    psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
        -v role="$role" -v password="$password" <<'SQL'
CREATE ROLE :"role" LOGIN PASSWORD :'password';
CREATE DATABASE :"role" OWNER :"role";
REVOKE ALL ON DATABASE :"role" FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE :"role" TO :"role";
SQL
    psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$role" -v role="$role" <<'SQL'
ALTER SCHEMA public OWNER TO :"role";
REVOKE ALL ON SCHEMA public FROM PUBLIC;
SQL
}

create_store mithril_gateway "$MITHRIL_GATEWAY_DB_PASSWORD"
create_store mithril_reputation "$MITHRIL_REPUTATION_DB_PASSWORD"
create_store mithril_memory_gate "$MITHRIL_MEMORY_GATE_DB_PASSWORD"

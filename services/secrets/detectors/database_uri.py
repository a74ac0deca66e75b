"""Database connection URIs with an inline password: postgres://user:PASSWORD@host/db.

Only the password is redacted: postgres://user:[REDACTED:database_uri]@host/db.
"""

from mithril.domain import Severity
from mithril.services.secrets.detectors._uri import UriCredentialDetector
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo

SCHEMES = (
    "postgresql", "postgres", "mysql", "mariadb", "mongodb+srv", "mongodb", "rediss", "redis",
    "amqps", "amqp", "mssql", "sqlserver", "oracle", "cockroachdb", "clickhouse", "couchdb",
    "couchbase", "neo4j+s", "neo4j", "bolt", "cassandra", "db2", "snowflake", "memcached",
    "influxdb", "elasticsearch", "jdbc:postgresql", "jdbc:mysql", "jdbc:sqlserver",
    "jdbc:oracle:thin", "jdbc:mariadb", "postgresql+psycopg2", "postgresql+asyncpg",
    "mysql+pymysql", "mysql+mysqldb", "sqlalchemy",
)  # fmt: skip

DETECTOR = UriCredentialDetector(
    info=KindInfo(
        "database_uri", CREDENTIAL, Severity.HIGH, "Password inside a database connection URI"
    ),
    priority=75,
    schemes=SCHEMES,
    confidence=0.95,
)

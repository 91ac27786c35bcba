"""MongoDB state the twin keeps per data volume: users, roles, databases, and each server's settings."""

from __future__ import annotations

from dataclasses import dataclass, field

USER_ADMIN_ROLES = {"userAdminAnyDatabase", "root"}
ANY_DB_WRITE_ROLES = {"readWriteAnyDatabase", "root"}


@dataclass
class MongoUser:
    """A user as db.getUser() reports it."""

    user: str
    db: str
    pwd: str
    roles: list[dict] = field(default_factory=list)  # [{"role": "readWrite", "db": "geo-db"}]

    def document(self) -> dict:
        """Return the user document mongo prints."""
        return {"_id": f"{self.db}.{self.user}", "userId": f"UUID-{self.db}-{self.user}", "user": self.user,
                "db": self.db, "roles": [dict(r) for r in self.roles], "mechanisms": ["SCRAM-SHA-1", "SCRAM-SHA-256"]}


@dataclass
class MongoData:
    """What lives on one data volume."""

    users: dict[tuple[str, str], MongoUser] = field(default_factory=dict)  # (auth db, user) -> user
    databases: dict[str, dict[str, int]] = field(default_factory=dict)  # db -> collection -> documents
    initialized: bool = False

    def can_write(self, user: MongoUser | None, db: str) -> bool:
        """Tell whether the user may read and write collections of db."""
        if user is None:
            return False
        return any(r["role"] in ANY_DB_WRITE_ROLES or (r["role"] in ("readWrite", "dbOwner") and r["db"] == db)
                   for r in user.roles)

    def can_admin_users(self, user: MongoUser | None, db: str) -> bool:
        """Tell whether the user may manage users of db."""
        if user is None:
            return False
        return any(r["role"] in USER_ADMIN_ROLES or (r["role"] in ("userAdmin", "dbOwner") and r["db"] == db)
                   for r in user.roles)

    def authenticate(self, user: str, pwd: str, auth_db: str) -> MongoUser | None:
        """Return the user when the credentials are right, else None."""
        found = self.users.get((auth_db, user))
        return found if found is not None and found.pwd == pwd else None


@dataclass
class MongoServer:
    """One running mongod: where its data lives and how it was started."""

    volume: str
    auth: bool
    tls_mode: str = "disabled"  # disabled | allowTLS | preferTLS | requireTLS
    port: int = 27017
    initializing: bool = False  # the entrypoint's init scripts run before access control is on


class MongoState:
    """All MongoDB data and servers of a twin (kept in twin.extensions.mongo)."""

    def __init__(self):
        self.volumes: dict[str, MongoData] = {}
        self.servers: dict[str, MongoServer] = {}  # pod uid -> server

    def data(self, volume: str) -> MongoData:
        """Return (creating if needed) the data on a volume."""
        return self.volumes.setdefault(volume, MongoData())

    def server(self, pod: dict) -> MongoServer | None:
        """Return the mongod running in a pod, if any."""
        return self.servers.get(pod["metadata"].get("uid", ""))


def volume_key(twin, pod: dict) -> str:
    """Return where a pod's /data/db lives: the bound PV for a claim, else the pod itself (ephemeral)."""
    ns = pod["metadata"]["namespace"]
    for vol in pod["spec"].get("volumes") or []:
        claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
        if claim:
            pvc = twin.get("persistentvolumeclaims", ns, claim)
            pv = (pvc or {}).get("spec", {}).get("volumeName")
            if pv:
                return f"pv/{pv}"
        if vol.get("hostPath"):
            return f"host/{vol['hostPath'].get('path')}"
    return f"pod/{pod['metadata'].get('uid', '')}"


def tls_mode(conf_text: str) -> str:
    """Read net.tls.mode (or net.ssl.mode) from a mongod.conf text; 'disabled' when absent."""
    import yaml

    try:
        conf = yaml.safe_load(conf_text) or {}
    except yaml.YAMLError:
        return "disabled"
    net = (conf.get("net") if isinstance(conf, dict) else None) or {}  # odd shapes: mongod refuses them at start
    section = (net.get("tls") or net.get("ssl") if isinstance(net, dict) else None) or {}
    mode = section.get("mode", "disabled") if isinstance(section, dict) else "disabled"
    return {"requireSSL": "requireTLS", "preferSSL": "preferTLS", "allowSSL": "allowTLS"}.get(mode, mode)

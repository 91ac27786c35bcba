"""Programs that need application state: mongo over MongoData, redis-cli, nc/telnet to memcached, curl/wget, DNS."""

from __future__ import annotations

import pytest

from aoi.twin import build_twin
from aoi.twin.controllers.chaos import NetworkFault, network_faults
from aoi.twin.core import operations
from aoi.twin.kubelet.execution import run_in_container

HOTEL, SOCIAL, SHOP = "test-hotel-reservation", "test-social-network", "astronomy-shop"
HOTELS_URL = "http://frontend:5000/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=37.7749&lon=-122.4194"


def pod_of(twin, ns: str, component: str) -> dict:
    """Return the running pod of a component."""
    behaviour = twin.extensions.behaviour
    return next(p for p in twin.list("pods", ns) if behaviour.component_of(p) == component
                and p["status"].get("phase") == "Running")


def sh(twin, ns: str, component: str, script: str, stdin: bytes = b""):
    """Run `sh -c script` in a component's pod; return (exit code, stdout, stderr)."""
    pod = pod_of(twin, ns, component)
    done = run_in_container(twin, pod, pod["spec"]["containers"][0]["name"], ["sh", "-c", script], stdin)
    return done.exit_code, done.stdout.decode(), done.stderr.decode()


def users(twin, ns: str, store: str) -> dict:
    """Return {user: [role@db...]} on a MongoDB's volume."""
    state = twin.extensions.mongo
    data = state.data(state.server(pod_of(twin, ns, store)).volume)
    return {u.user: sorted(f"{r['role']}@{r['db']}" for r in u.roles) for (_, _), u in data.users.items()}


def scale(twin, ns: str, name: str, replicas: int) -> None:
    """Scale a deployment and let the cluster settle."""
    with twin.lock:
        operations.set_replicas(twin, twin.resource("deployments"), twin.get("deployments", ns, name), replicas)
        twin.advance(30)


@pytest.fixture
def hotel_twin():
    return build_twin(["hotel-reservation"])


@pytest.fixture(scope="module")
def shared_hotel():
    return build_twin(["hotel-reservation"])


@pytest.fixture(scope="module")
def social():
    return build_twin(["social-network"])


# --- MongoDB: the init, revoke and remove scripts of HotelReservation ---
@pytest.mark.parametrize("store,db", [("mongodb-geo", "geo-db"), ("mongodb-rate", "rate-db")])
def test_init_script_created_admin_and_root(shared_hotel, store, db):
    roles = ["readWrite@" + db, "userAdminAnyDatabase@admin"]
    assert users(shared_hotel, HOTEL, store) == {"admin": roles, "root": roles}


def test_revoke_script_removes_read_write_and_mitigate_restores_it(hotel_twin):
    code, out, _ = sh(hotel_twin, HOTEL, "mongodb-geo", "bash /scripts/revoke-admin-geo-mongo.sh")
    assert code == 0 and out.startswith("Downgrading admin user privileges...\nMongoDB shell version v4.4.6\n")
    assert users(hotel_twin, HOTEL, "mongodb-geo")["admin"] == ["userAdminAnyDatabase@admin"]
    query = "mongo geo-db -u admin -p admin --authenticationDatabase admin --quiet --eval 'db.geo.findOne()'"
    code, _, err = sh(hotel_twin, HOTEL, "mongodb-geo", query)
    assert code == 1 and err.startswith("uncaught exception: Error: error: {\n\t\"ok\" : 0,\n")
    assert 'not authorized on geo-db to execute command { find: \\"geo\\", filter: {}, limit: 1.0' in err
    assert sh(hotel_twin, HOTEL, "mongodb-geo", "bash /scripts/revoke-mitigate-admin-geo-mongo.sh")[0] == 0
    assert users(hotel_twin, HOTEL, "mongodb-geo")["admin"] == ["readWrite@geo-db", "userAdminAnyDatabase@admin"]
    code, out, _ = sh(hotel_twin, HOTEL, "mongodb-geo", query)
    assert code == 0 and '"hotelId" : "1"' in out


def test_revoked_role_makes_geo_crash_on_restart(hotel_twin):
    sh(hotel_twin, HOTEL, "mongodb-geo", "bash /scripts/revoke-admin-geo-mongo.sh")
    geo = pod_of(hotel_twin, HOTEL, "geo")
    with hotel_twin.lock:
        operations.delete(hotel_twin, hotel_twin.resource("pods"), HOTEL, geo["metadata"]["name"])
        hotel_twin.advance(60)
    statuses = [p["status"].get("containerStatuses", [{}])[0] for p in hotel_twin.list("pods", HOTEL)
                if p["metadata"]["name"].startswith("geo-")]
    assert statuses and not any(s.get("ready") for s in statuses)


def test_remove_script_drops_admin_and_mitigate_recreates_it(hotel_twin):
    code, out, _ = sh(hotel_twin, HOTEL, "mongodb-rate", "bash /scripts/remove-admin-mongo.sh")
    assert code == 0 and "\ntrue\nAdmin user removed successfully\n" in out
    assert set(users(hotel_twin, HOTEL, "mongodb-rate")) == {"root"}
    code, _, err = sh(hotel_twin, HOTEL, "mongodb-rate", "mongo admin -u admin -p admin --eval 'db.version()'")
    assert code == 1 and err.startswith("Error: Authentication failed. :\n")
    assert err.endswith("exception: connect failed\nexiting with code 1\n")
    code, out, _ = sh(hotel_twin, HOTEL, "mongodb-rate", "bash /scripts/remove-mitigate-admin-rate-mongo.sh")
    assert code == 0 and 'Successfully added user: {\n\t"user" : "admin",\n\t"roles" : [' in out
    assert users(hotel_twin, HOTEL, "mongodb-rate")["admin"] == ["readWrite@rate-db", "userAdminAnyDatabase@admin"]


def test_user_management_needs_authentication_and_privileges(hotel_twin):
    code, _, err = sh(hotel_twin, HOTEL, "mongodb-geo", "mongo --quiet --eval 'db.getSiblingDB(\"admin\").getUsers()'")
    assert code == 1 and err.startswith("uncaught exception: Error: command usersInfo requires authentication :\n")
    create = ("mongo admin -u root -p root --quiet --eval \"db.createUser({user: 'reader', pwd: 'r', "
              "roles: [{role: 'readWrite', db: 'geo-db'}]})\"")
    assert sh(hotel_twin, HOTEL, "mongodb-geo", create)[0] == 0
    denied = "mongo admin -u reader -p r --quiet --eval \"db.createUser({user: 'x', pwd: 'y', roles: []})\""
    code, _, err = sh(hotel_twin, HOTEL, "mongodb-geo", denied)
    assert code == 1
    assert err.startswith('uncaught exception: Error: couldn\'t add user: not authorized on admin to execute '
                          'command { createUser: "x", pwd: "xxx", roles: [], digestPassword: true, writeConcern: '
                          '{ w: "majority", wtimeout: 600000.0 }, lsid: { id: UUID("')
    code, out, _ = sh(hotel_twin, HOTEL, "mongodb-geo", "mongo geo-db -u reader -p r --authenticationDatabase admin "
                                                        "--quiet --eval 'db.geo.count()'")
    assert (code, out) == (0, "80\n")


def test_user_documents_and_helpers_print_like_the_44_shell(shared_hotel):
    code, out, _ = sh(shared_hotel, HOTEL, "mongodb-geo",
                      "mongo -u root -p root --quiet --eval 'printjson(db.getSiblingDB(\"admin\").getUser(\"admin\"))'")
    assert code == 0 and out.startswith('{\n\t"_id" : "admin.admin",\n\t"userId" : UUID("')
    assert '\t"mechanisms" : [\n\t\t"SCRAM-SHA-1",\n\t\t"SCRAM-SHA-256"\n\t]\n}\n' in out
    code, out, _ = sh(shared_hotel, HOTEL, "mongodb-geo", "echo 'show dbs' | mongo -u root -p root --quiet")
    assert (code, out) == (0, "admin   0.000GB\nconfig  0.000GB\ngeo-db  0.000GB\nlocal   0.000GB\nbye\n")
    code, out, _ = sh(shared_hotel, HOTEL, "mongodb-geo",
                      "mongo -u root -p root --quiet --eval 'db.getSiblingDB(\"admin\").dropUser(\"nobody\")'")
    assert (code, out) == (0, "false\n")
    code, _, err = sh(shared_hotel, HOTEL, "mongodb-geo", "mongo --quiet --eval 'use admin'")
    assert code == 1 and err == "uncaught exception: SyntaxError: missing ; before statement :\n@(shell eval):1:5\n"
    code, out, _ = sh(shared_hotel, HOTEL, "mongodb-profile", "mongo --quiet --eval 'rs.status().codeName'")
    assert (code, out) == (0, "NoReplicationEnabled\n")


def test_mongo_banner_and_connection_failures(shared_hotel):
    ping = "mongo --host mongodb-profile --eval 'db.runCommand({ping: 1}).ok'"
    code, out, err = sh(shared_hotel, HOTEL, "frontend", ping)
    assert code == 0 and out.startswith("MongoDB shell version v4.4.6\nconnecting to: mongodb://mongodb-profile:27017/"
                                        "?compressors=disabled&gssapiServiceName=mongodb\nImplicit session: session")
    assert out.endswith("MongoDB server version: 4.4.6\n1\n")
    code, _, err = sh(shared_hotel, HOTEL, "frontend", "mongo --quiet --eval 1")
    assert code == 1 and err.startswith("Error: couldn't connect to server 127.0.0.1:27017, connection attempt "
                                        "failed: SocketException: Error connecting to 127.0.0.1:27017 :: caused by "
                                        ":: Connection refused :\n")
    code, _, err = sh(shared_hotel, HOTEL, "frontend", "mongo --quiet mongodb://x:y@nosuch:27017/db --eval 1")
    assert code == 1 and "HostNotFound: Could not find address for nosuch:27017" in err
    code, _, err = sh(shared_hotel, HOTEL, "frontend", "mongosh mongodb://admin:bad@mongodb-geo/?authSource=admin "
                                                       "--quiet --eval 1")
    assert (code, err) == (1, "MongoServerError: Authentication failed.\n")


def test_tls_required_closes_plain_connections(hotel_twin):
    server = hotel_twin.extensions.mongo.server(pod_of(hotel_twin, HOTEL, "mongodb-profile"))
    server.tls_mode = "requireTLS"  # what net.tls.mode: requireTLS in mongod.conf leaves after a restart
    code, _, err = sh(hotel_twin, HOTEL, "profile", "mongo --host mongodb-profile --quiet --eval 1")
    assert code == 1 and err.startswith("Error: network error while attempting to run command 'isMaster' on host "
                                        "'mongodb-profile:27017'  :\n")
    assert sh(hotel_twin, HOTEL, "profile", "mongo --tls --tlsAllowInvalidCertificates --host mongodb-profile "
                                            "--quiet --eval 1")[:2] == (0, "1\n")


def test_local_data_writes_and_finds(hotel_twin):
    script = "db.orders.insertOne({_id: 7, item: 'pen'}); db.orders.find({item: 'pen'})"
    code, out, _ = sh(hotel_twin, HOTEL, "mongodb-user", f'mongo shop --quiet --eval "{script}"')
    assert (code, out) == (0, '{ "_id" : 7, "item" : "pen" }\n')
    code, out, _ = sh(hotel_twin, HOTEL, "mongodb-user", "mongo shop --quiet --eval 'db.getCollectionNames()'")
    assert (code, out) == (0, '[ "orders" ]\n')


# --- Redis and memcached ---
def test_redis_cli_reads_the_seeded_keyspace(social):
    code, out, _ = sh(social, SOCIAL, "user-timeline-service", "redis-cli -h user-timeline-redis dbsize")
    assert (code, out) == (0, "6\n")
    code, out, _ = sh(social, SOCIAL, "user-timeline-service", "redis-cli -h user-timeline-redis info keyspace")
    assert out == "# Keyspace\r\ndb0:keys=6,expires=0,avg_ttl=0\r\n\n"
    code, out, _ = sh(social, SOCIAL, "user-timeline-service", "redis-cli -h social-graph-redis --no-raw ping; "
                                                               "redis-cli -h social-graph-redis type nosuch; "
                                                               "redis-cli -h social-graph-redis config get maxmemory")
    assert out == "PONG\nnone\nmaxmemory\n0\n"
    code, out, _ = sh(social, SOCIAL, "user-timeline-service", "redis-cli -h home-timeline-redis set k v ex 60; "
                                                               "redis-cli -h home-timeline-redis --no-raw get k; "
                                                               "redis-cli -h home-timeline-redis --no-raw ttl k; "
                                                               "redis-cli -h home-timeline-redis nosuch x")
    assert out == 'OK\n"v"\n(integer) 60\nERR unknown command `nosuch`, with args beginning with: `x`, \n'


def test_redis_cli_fails_when_the_redis_is_gone():
    twin = build_twin(["social-network"])
    scale(twin, SOCIAL, "home-timeline-redis", 0)
    code, out, err = sh(twin, SOCIAL, "home-timeline-service", "redis-cli -h home-timeline-redis ping")
    assert (code, out, err) == (1, "", "Could not connect to Redis at home-timeline-redis:6379: Connection refused\n")
    assert sh(twin, SOCIAL, "home-timeline-service", "redis-cli -h nosuch ping")[2].endswith(
        "nosuch:6379: Name or service not known\n")


def test_memcached_stats_over_nc_and_telnet(shared_hotel):
    code, out, _ = sh(shared_hotel, HOTEL, "rate", "echo stats | nc memcached-rate 11211")
    lines = out.split("\r\n")
    assert code == 0 and lines[0] == "STAT pid 1" and lines[-2:] == ["END", ""]
    assert "STAT limit_maxbytes 67108864" in lines and "STAT threads 4" in lines
    code, out, _ = sh(shared_hotel, HOTEL, "rate", "printf 'version\\nquit\\n' | telnet memcached-rate 11211")
    assert code == 1 and out.endswith("Connected to memcached-rate.\nEscape character is '^]'.\nVERSION 1.6.21\r\n"
                                      "Connection closed by foreign host.\n")


def test_nc_port_checks(shared_hotel):
    code, _, err = sh(shared_hotel, HOTEL, "frontend", "nc -zv memcached-rate 11211")
    ip = shared_hotel.get("services", HOTEL, "memcached-rate")["spec"]["clusterIP"]
    assert (code, err) == (0, f"memcached-rate ({ip}:11211) open\n")
    code, _, err = sh(shared_hotel, HOTEL, "frontend", "nc -z -w 2 localhost 6379")
    assert code == 1 and err.endswith("Connection refused\n")
    assert sh(shared_hotel, HOTEL, "frontend", "nc -z nosuch 80")[2] == "nc: bad address 'nosuch'\n"


# --- HTTP ---
def test_curl_to_healthy_services(shared_hotel):
    code, out, err = sh(shared_hotel, HOTEL, "frontend", f"curl -s '{HOTELS_URL}'")
    assert code == 0 and out.startswith('{"type":"FeatureCollection","features":[{"type":"Feature","id":"1"')
    code, out, _ = sh(shared_hotel, HOTEL, "frontend", "curl -s -o /dev/null -w '%{http_code}' frontend:5000/nope")
    assert (code, out) == (0, "404")
    code, out, _ = sh(shared_hotel, HOTEL, "frontend", "curl -s http://jaeger:16686/api/services")
    assert code == 0 and '"frontend"' in out and '"search"' in out
    code, _, err = sh(shared_hotel, HOTEL, "frontend", "curl -sS http://geo:8083/")
    assert (code, err) == (1, "curl: (1) Received HTTP/0.9 when not allowed\n")
    code, _, err = sh(shared_hotel, HOTEL, "frontend", "curl -sS -f frontend:5000/nope")
    assert (code, err) == (22, "curl: (22) The requested URL returned error: 404\n")
    code, out, err = sh(shared_hotel, HOTEL, "frontend", "curl http://nosuch/")
    assert code == 6 and err.endswith("curl: (6) Could not resolve host: nosuch\n")


def test_curl_follows_health(hotel_twin):
    scale(hotel_twin, HOTEL, "search", 0)
    code, out, err = sh(hotel_twin, HOTEL, "frontend", "curl -sS -w '%{http_code}' http://search:8082/")
    assert (code, out, err) == (7, "000", "curl: (7) Failed to connect to search port 8082 after 0 ms: Couldn't "
                                          "connect to server\n")
    code, out, _ = sh(hotel_twin, HOTEL, "frontend", f"curl -s -w '\\n%{{http_code}}' '{HOTELS_URL}'")
    assert code == 0 and out.endswith("\n500") and "connection refused" in out
    victim = pod_of(hotel_twin, HOTEL, "user")["metadata"]["name"]
    network_faults(hotel_twin).put(NetworkFault(HOTEL, (victim,), "loss", 100.0, 0.0, hotel_twin.clock.now() + 200))
    code, _, err = sh(hotel_twin, HOTEL, "frontend", "curl -sS --connect-timeout 10 http://user:8086/")
    assert (code, err) == (28, "curl: (28) Connection timed out after 10001 milliseconds\n")


def test_curl_to_thrift_and_wget(social):
    code, _, err = sh(social, SOCIAL, "nginx-thrift", "curl -sS user-service:9090")
    assert (code, err) == (52, "curl: (52) Empty reply from server\n")
    code, out, _ = sh(social, SOCIAL, "nginx-thrift", "wget -qO- --post-data 'username=a' "
                                                      "http://nginx-thrift:8080/wrk2-api/post/compose")
    assert (code, out) == (0, "Successfully upload post\n")
    code, _, err = sh(social, SOCIAL, "nginx-thrift", "wget -O - http://nginx-thrift:8080/nope")
    assert code == 1 and err.endswith("wget: server returned error: HTTP/1.1 404 Not Found\n")


# --- DNS and sockets ---
def test_cluster_dns_tools(shared_hotel):
    ip = shared_hotel.get("services", HOTEL, "geo")["spec"]["clusterIP"]
    code, out, _ = sh(shared_hotel, HOTEL, "frontend", "nslookup geo")
    assert (code, out) == (0, f"Server:\t\t10.96.0.10\nAddress:\t10.96.0.10#53\n\n"
                              f"Name:\tgeo.{HOTEL}.svc.cluster.local\nAddress: {ip}\n\n")
    code, out, _ = sh(shared_hotel, HOTEL, "frontend", "nslookup nosuch")
    assert code == 1 and "** server can't find nosuch: NXDOMAIN\n" in out
    assert sh(shared_hotel, HOTEL, "frontend", "getent hosts kubernetes.default")[1] == \
        "10.96.0.1       kubernetes.default.svc.cluster.local\n"
    assert sh(shared_hotel, HOTEL, "frontend", "host geo")[1] == f"geo.{HOTEL}.svc.cluster.local has address {ip}\n"
    assert sh(shared_hotel, HOTEL, "frontend", f"dig +short geo.{HOTEL}.svc.cluster.local")[1] == f"{ip}\n"
    assert "status: NXDOMAIN" in sh(shared_hotel, HOTEL, "frontend", "dig geo")[1]  # dig ignores the search list


def test_netstat_ss_and_kill(shared_hotel):
    code, out, _ = sh(shared_hotel, HOTEL, "mongodb-geo", "netstat -tlnp")
    assert code == 0 and "tcp        0      0 0.0.0.0:27017           0.0.0.0:*               LISTEN      1/" in out
    assert "*:8083" in sh(shared_hotel, HOTEL, "geo", "ss -ltn")[1]
    assert sh(shared_hotel, HOTEL, "geo", "kill 1") == (1, "", "kill: can't kill pid 1: Operation not permitted\n")


# --- through the real kubectl ---
def test_programs_through_kubectl_exec(hotel):
    pod = pod_of(hotel.twin, HOTEL, "mongodb-geo")["metadata"]["name"]
    done = hotel.kubectl(["exec", "-n", HOTEL, pod, "--", "bash", "/scripts/revoke-admin-geo-mongo.sh"])
    assert done.returncode == 0 and done.stdout.endswith("MongoDB server version: 4.4.6\nPrivileges downgraded\n")
    assert users(hotel.twin, HOTEL, "mongodb-geo")["admin"] == ["userAdminAnyDatabase@admin"]
    done = hotel.kubectl(["exec", "-n", HOTEL, "deploy/frontend", "--", "curl", "-s", "-w", "%{http_code}",
                          "http://frontend:5000/"])
    assert done.returncode == 0 and done.stdout.endswith("</html>\n200")

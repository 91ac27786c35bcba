"""Cluster DNS as CoreDNS answers it, and the tools that ask: nslookup, dig, host, getent hosts."""

from __future__ import annotations

import ipaddress
import time
from dataclasses import dataclass, field

from aoi.twin.behaviour.programs.basics import hex_id, out, rng_for
from aoi.twin.core.podstatus import is_ready
from aoi.twin.core.selectors import map_matches

DOMAIN = "cluster.local"
DNS_IP = "10.96.0.10"
TTL = 30
SOA = "ns.dns.cluster.local. hostmaster.cluster.local. {serial} 7200 1800 86400 30"


@dataclass
class Answer:
    """What a name resolves to."""

    name: str  # the fully qualified name that answered (no trailing dot)
    addresses: list[str] = field(default_factory=list)
    service: dict | None = None


def resolv_conf(ctx) -> tuple[list[str], int, str]:
    """Return (search domains, ndots, nameserver) from the pod's /etc/resolv.conf."""
    search, ndots, server = [], 1, DNS_IP
    for line in ctx.files.get("/etc/resolv.conf", b"").decode().splitlines():
        words = line.split()
        if words[:1] == ["search"]:
            search = words[1:]
        elif words[:1] == ["nameserver"] and len(words) > 1:
            server = words[1]
        elif words[:1] == ["options"]:
            ndots = next((int(w[6:]) for w in words[1:] if w.startswith("ndots:") and w[6:].isdigit()), ndots)
    return search, ndots, server


def hosts_file(ctx) -> dict[str, list[str]]:
    """Return /etc/hosts as name -> addresses."""
    table: dict[str, list[str]] = {}
    for line in ctx.files.get("/etc/hosts", b"").decode().splitlines():
        words = line.split("#", 1)[0].split()
        for name in words[1:]:
            table.setdefault(name, []).append(words[0])
    return table


def _ready_ips(twin, svc: dict) -> list[str]:
    """Return the IPs of the ready pods a headless Service selects."""
    pods = twin.list("pods", svc["metadata"]["namespace"])
    ips = [p["status"]["podIP"] for p in pods if svc["spec"].get("selector") and is_ready(p) and
           map_matches(svc["spec"]["selector"], p["metadata"].get("labels")) and p["status"].get("podIP")]
    return sorted(ips, key=lambda ip: tuple(int(x) for x in ip.split(".")))


def lookup_fqdn(twin, fqdn: str) -> Answer | None:
    """Answer an absolute name as CoreDNS's kubernetes plugin would (None: NXDOMAIN)."""
    name = fqdn.rstrip(".").lower()
    if name.endswith(f".pod.{DOMAIN}"):
        head = name[: -len(f".pod.{DOMAIN}")].split(".")
        ip = head[0].replace("-", ".")
        return Answer(name, [ip]) if len(head) == 2 and _is_ip(ip) else None
    if not name.endswith(f".svc.{DOMAIN}"):
        return None
    head = name[: -len(f".svc.{DOMAIN}")].split(".")
    if len(head) != 2:
        return None
    svc = twin.get("services", head[1], head[0])
    if svc is None or svc["spec"].get("type") == "ExternalName":
        return None
    cluster_ip = svc["spec"].get("clusterIP")
    addresses = _ready_ips(twin, svc) if cluster_ip in (None, "None") else [cluster_ip]
    return Answer(name, addresses, svc) if addresses else None


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def candidates(name: str, search: list[str], ndots: int) -> list[str]:
    """Return the names a stub resolver tries, in order (search list first for short names)."""
    if name.endswith("."):
        return [name]
    expanded = [f"{name}.{domain}" for domain in search]
    return [name] + expanded if name.count(".") >= ndots else expanded + [name]


def resolve(twin, ctx, name: str, use_hosts: bool = True) -> Answer | None:
    """Resolve a name from a pod: IP literals, /etc/hosts, then cluster DNS with the search list."""
    if _is_ip(name):
        return Answer(name, [name], _service_by_ip(twin, name))
    if use_hosts and name in hosts_file(ctx):
        return Answer(name, hosts_file(ctx)[name])
    search, ndots, _ = resolv_conf(ctx)
    for candidate in candidates(name, search, ndots):
        answer = lookup_fqdn(twin, candidate)
        if answer is not None:
            return answer
    return None


def _service_by_ip(twin, ip: str) -> dict | None:
    return next((s for s in twin.list("services") if s["spec"].get("clusterIP") == ip), None)


def reverse(twin, ip: str) -> str | None:
    """Return the PTR name of a ClusterIP or pod IP."""
    svc = _service_by_ip(twin, ip)
    if svc is not None:
        return f"{svc['metadata']['name']}.{svc['metadata']['namespace']}.svc.{DOMAIN}"
    for svc in twin.list("services"):
        if ip in _ready_ips(twin, svc):
            return f"{ip.replace('.', '-')}.{svc['metadata']['name']}.{svc['metadata']['namespace']}.svc.{DOMAIN}"
    return None


def arpa(ip: str) -> str:
    """Return the in-addr.arpa name of an IPv4 address."""
    return ".".join(reversed(ip.split("."))) + ".in-addr.arpa"


def busybox(ctx) -> bool:
    """Tell whether the container's tools are busybox's (busybox and alpine images)."""
    spec = next((c for c in ctx.pod["spec"]["containers"] if c["name"] == ctx.container), {})
    image = spec.get("image", "").rsplit("/", 1)[-1]
    return image.startswith(("busybox", "alpine")) or "alpine" in image


def nslookup(twin, argv, ctx):
    """nslookup NAME [SERVER]: bind's (or busybox's) output; exit 1 on NXDOMAIN."""
    args = [a for a in argv[1:] if not a.startswith("-")]
    if not args:
        return out("", "Usage: nslookup [HOST] [SERVER]\n", 1)
    _, _, server = resolv_conf(ctx)
    if len(args) > 1 and args[1] not in (server, "kube-dns.kube-system", "kube-dns.kube-system.svc.cluster.local"):
        return out(";; connection timed out; no servers could be reached\n\n", "", 1)
    sep = ":" if busybox(ctx) else "#"
    head = f"Server:\t\t{server}\nAddress:\t{server}{sep}53\n\n"
    name = args[0]
    if _is_ip(name):
        ptr = reverse(twin, name)
        if ptr is None:
            return out(head + f"** server can't find {arpa(name)}: NXDOMAIN\n\n", "", 1)
        return out(head + f"{arpa(name)}\tname = {ptr}.\n\n")
    answer = resolve(twin, ctx, name, use_hosts=False)
    if answer is None:
        return out(head + f"** server can't find {name}: NXDOMAIN\n\n", "", 1)
    return out(head + "".join(f"Name:\t{answer.name}\nAddress: {ip}\n" for ip in answer.addresses) + "\n")


def host(twin, argv, ctx):
    """host NAME: 'has address' lines; exit 1 when not found."""
    args = [a for a in argv[1:] if not a.startswith("-")]
    if not args:
        return out("", "Usage: host [-aCdilrTvVw] [-c class] [-N ndots] [-t type] [-W time]\n"
                       "            [-R number] [-m flag] [-p port] hostname [server]\n", 1)
    name = args[0]
    if _is_ip(name):
        ptr = reverse(twin, name)
        if ptr is None:
            return out(f"Host {arpa(name)} not found: 3(NXDOMAIN)\n", "", 1)
        return out(f"{arpa(name)} domain name pointer {ptr}.\n")
    answer = resolve(twin, ctx, name, use_hosts=False)
    if answer is None:
        return out(f"Host {name} not found: 3(NXDOMAIN)\n", "", 1)
    return out("".join(f"{answer.name} has address {ip}\n" for ip in answer.addresses))


def getent(twin, argv, ctx):
    """getent hosts [NAME...] (and passwd/group for root): glibc's format; exit 2 when a key is missing."""
    if len(argv) < 2:
        return out("", "Usage: getent [OPTION...] database [key ...]\n", 1)
    database, keys = argv[1], argv[2:]
    if database in ("passwd", "group"):
        line = "root:x:0:0:root:/root:/bin/bash" if database == "passwd" else "root:x:0:"
        return out(line + "\n") if keys in ([], ["root"], ["0"]) else out("", "", 2)
    if database not in ("hosts", "ahosts", "ahostsv4"):
        return out("", f"Unknown database: {database}\n", 1)
    if not keys:
        lines = ctx.files.get("/etc/hosts", b"").decode().splitlines()
        return out("".join(f"{w[0]:<15} {' '.join(w[1:])}\n" for w in (line.split() for line in lines)
                           if w and not w[0].startswith("#")))
    found, code = [], 0
    for key in keys:
        answer = resolve(twin, ctx, key)
        if answer is None:
            code = 2
            continue
        found += [f"{ip:<15} {answer.name if answer.name != ip else key}\n" for ip in answer.addresses[:1]]
    return out("".join(found), "", code)


def dig(twin, argv, ctx):
    """dig [@server] NAME [A] [+short] [+search]: CoreDNS's answers in dig's layout."""
    opts = {a for a in argv[1:] if a.startswith("+")}
    args = [a for a in argv[1:] if not a.startswith(("+", "@", "-")) and a.upper() not in ("A", "IN")]
    name = args[0] if args else "."
    answer = None
    if "+search" in opts:
        answer = resolve(twin, ctx, name, use_hosts=False)
    elif name != ".":
        answer = lookup_fqdn(twin, name)
    if "+short" in opts:
        return out("".join(f"{ip}\n" for ip in (answer.addresses if answer else [])))
    return out(_dig_text(name, answer, ctx.now, "+search" in opts))


def _dig_text(name: str, answer: Answer | None, now: float, searched: bool) -> str:
    """Render dig's full output for an A query."""
    qname = (answer.name if answer and searched else name).rstrip(".") + "."
    rng = rng_for("dig", qname, now)
    status = "NOERROR" if answer else "NXDOMAIN"
    records = [f"{qname}\t\t{TTL}\tIN\tA\t{ip}" for ip in (answer.addresses if answer else [])]
    authority = [] if answer else [f"{DOMAIN}.\t\t{TTL}\tIN\tSOA\t{SOA.format(serial=int(now) // 10)}"]
    size = 12 + len(qname) + 5 + 16 * len(records) + (70 if authority else 0) + 41
    lines = ["", f"; <<>> DiG 9.18.28-1~deb12u2-Debian <<>> {name}", ";; global options: +cmd", ";; Got answer:",
             f";; ->>HEADER<<- opcode: QUERY, status: {status}, id: {rng.randrange(1, 65536)}",
             f";; flags: qr aa rd; QUERY: 1, ANSWER: {len(records)}, AUTHORITY: {len(authority)}, ADDITIONAL: 1",
             ";; WARNING: recursion requested but not available", "", ";; OPT PSEUDOSECTION:",
             "; EDNS: version: 0, flags:; udp: 1232", f"; COOKIE: {hex_id(rng, 16)}{hex_id(rng, 32)} (good)",
             ";; QUESTION SECTION:", f";{qname}\t\t\tIN\tA", ""]
    if records:
        lines += [";; ANSWER SECTION:"] + records + [""]
    if authority:
        lines += [";; AUTHORITY SECTION:"] + authority + [""]
    when = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(now))
    lines += [";; Query time: 0 msec", f";; SERVER: {DNS_IP}#53({DNS_IP}) (UDP)", f";; WHEN: {when}",
              f";; MSG SIZE  rcvd: {size}", "", ""]
    return "\n".join(lines)


PROGRAMS = {"nslookup": nslookup, "host": host, "getent": getent, "dig": dig}

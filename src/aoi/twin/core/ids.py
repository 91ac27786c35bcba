"""Deterministic identifiers: uids, name suffixes, template hashes and IP addresses, all from one seed."""

from __future__ import annotations

import random

import orjson

# Kubernetes' rand.SafeEncodeString alphabet (no vowels, no confusable digits).
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def fnv32a(data: bytes) -> int:
    """Return the 32-bit FNV-1a hash of data.

    Example:
        >>> fnv32a(b"")
        2166136261
    """
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(text: str) -> str:
    """Map each character onto the safe alphabet, as Kubernetes does for hashes.

    Example:
        >>> safe_encode("123")
        '567'
    """
    return "".join(ALPHANUMS[ord(ch) % len(ALPHANUMS)] for ch in text)


def template_hash(template: dict, collision_count: int = 0) -> str:
    """Return the pod-template-hash of a pod template (stable across runs and seeds)."""
    data = orjson.dumps(template, option=orjson.OPT_SORT_KEYS) + str(collision_count).encode()
    return safe_encode(str(fnv32a(data)))


class Ids:
    """All randomness of one twin: same seed, same sequence of ids."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self._cluster_ips: set[str] = set()
        self._pod_ips: dict[str, int] = {}

    def uid(self) -> str:
        """Return a UUIDv4-shaped uid."""
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:32]}"

    def suffix(self, n: int = 5) -> str:
        """Return a generateName suffix such as 'x7k2p'."""
        return "".join(self.rng.choice(ALPHANUMS) for _ in range(n))

    def token(self) -> str:
        """Return a bearer-token-like secret string."""
        return f"{self.rng.getrandbits(256):064x}"

    def cluster_ip(self) -> str:
        """Return an unused Service ClusterIP in 10.96.0.0/16."""
        while True:
            ip = f"10.96.{self.rng.randint(0, 255)}.{self.rng.randint(2, 254)}"
            if ip not in self._cluster_ips and ip not in ("10.96.0.1", "10.96.0.10"):
                self._cluster_ips.add(ip)
                return ip

    def reserve_cluster_ip(self, ip: str) -> None:
        """Mark a requested ClusterIP as taken."""
        self._cluster_ips.add(ip)

    def pod_ip(self, pod_cidr: str) -> str:
        """Return the next pod IP of a node's pod CIDR (e.g. 10.244.1.0/24), like a host-local IPAM."""
        base = pod_cidr.split("/")[0].rsplit(".", 1)[0]
        nxt = self._pod_ips.get(base, 1) + 1
        self._pod_ips[base] = nxt if nxt < 254 else 2
        return f"{base}.{nxt}"

    def port(self, low: int = 30000, high: int = 32767) -> int:
        """Return a NodePort in the default range."""
        return self.rng.randint(low, high)

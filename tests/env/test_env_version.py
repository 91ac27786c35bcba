"""ENV_VERSION is enforced, not hoped: a digest of a few short transcripts is pinned under the current version.

A change that alters what agents observe (a twin, fault, prompt, shell or scoring change) fails here until
aoi.env.ENV_VERSION is bumped and the digest of the new version is pinned:

    .venv/bin/python -m tests.env.test_env_version --update   # prints the PINNED entry to add for ENV_VERSION
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

from tests.env.test_determinism import transcript

from aoi.env import ENV_VERSION

SEED = 3
# one per app and task type: social-network detection and mitigation, astronomy-shop localization, hotel analysis
PROBLEMS = ("k8s_target_port-misconfig-detection-1", "astronomy_shop_ad_service_failure-localization-1",
            "revoke_auth_mongodb-analysis-1", "scale_pod_zero_social_net-mitigation-1")
PINNED = {  # ENV_VERSION -> sha256 of the transcripts of PROBLEMS at SEED
    "1": "bb087472460204deea886e6ccc886be2db59ae05c141c091a887753916776c3c",
}
# what an action gave, as data beside its observation (Env.step's docstring): pinned by tests/env/test_env_api.py,
# left out here so that adding such a fact needs no new version while the observations stay the same
FACTS = ("refused", "exit_status", "cut", "accepted", "suffix")
CHANGED = ("observations changed: bump aoi.env.ENV_VERSION and update the pinned digest "
           "(`.venv/bin/python -m tests.env.test_env_version --update` prints it)")


def digest(folder: Path) -> str:
    """Return the sha256 of the transcripts, episode folder masked, the token count over it and the FACTS dropped."""
    out = []
    for problem_id in PROBLEMS:
        workdir = folder / problem_id
        steps = transcript(problem_id, SEED, workdir)
        for step in steps[1:]:
            step[4].get("results", {}).pop("in_tokens", None)  # counts the folder's name, which differs per run
            for fact in FACTS:
                step[4].pop(fact)
        out.append(json.dumps(steps).replace(str(workdir), "<WORKDIR>"))
    return hashlib.sha256("\n".join(out).encode()).hexdigest()


def test_observations_match_the_digest_pinned_for_this_version(tmp_path):
    assert ENV_VERSION in PINNED, f"no digest is pinned for ENV_VERSION {ENV_VERSION!r}: {CHANGED}"
    assert digest(tmp_path) == PINNED[ENV_VERSION], CHANGED


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    with tempfile.TemporaryDirectory() as scratch:
        print(f'    "{ENV_VERSION}": "{digest(Path(scratch))}",')

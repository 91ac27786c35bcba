"""The environment's version: what a trajectory and a results row were produced by, and what a resume must match.

Bump ENV_VERSION whenever the same problem, seed and actions would give other observations or results (a twin,
fault, prompt, scoring or shell change), as Gymnasium registers a changed environment under a new `-vN` id instead
of editing the old one. tests/env/test_env_version.py pins a digest of a few short transcripts under this version
and fails with "observations changed: bump aoi.env.ENV_VERSION and update the pinned digest" until both are done;
`.venv/bin/python -m tests.env.test_env_version --update` prints the new digest to pin.
"""

ENV_VERSION = "1"

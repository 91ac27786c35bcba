"""The trajectory store (SQLite, WAL) and its exports (AIOpsLab result JSON, JSONL, Hugging Face datasets)."""

from aoi.store.export import read_jsonl, to_aiopslab_json, to_hf_dataset, to_jsonl, write_aiopslab
from aoi.store.sqlite import SCHEMA_VERSION, StoreError, TrajectoryStore

__all__ = ["SCHEMA_VERSION", "StoreError", "TrajectoryStore", "read_jsonl", "to_aiopslab_json", "to_hf_dataset",
           "to_jsonl", "write_aiopslab"]

"""The twin's core: the object store, API semantics (operations, admission, patch), errors, selectors, ids, clock."""

"""Kubernetes Status errors, shaped so kubectl prints its usual `Error from server (Reason): ...` lines."""

from __future__ import annotations

from aoi.twin.core.resources import Resource


class ApiError(Exception):
    """An API failure carrying the HTTP code and the Status body kubectl renders."""

    def __init__(self, code: int, reason: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details or {}

    def status(self) -> dict:
        """Return the metav1.Status object for this error."""
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            body["details"] = self.details
        return body

    def body(self) -> tuple[bytes, str]:
        """Return the response body and its content type: the Status as JSON, whatever text the message quotes
        (a lone surrogate from a malformed name is written as its escape, so the answer always goes out)."""
        import orjson

        status = self.status()
        try:
            return orjson.dumps(status), "application/json"
        except TypeError:  # orjson.JSONEncodeError: text that is not valid Unicode
            return orjson.dumps(printable(status)), "application/json"


class PlainError(ApiError):
    """A failure answered with a plain-text body, as errors proxied from a kubelet are (not a Status)."""

    def status(self) -> dict:
        """Return the Status an in-process caller sees."""
        return {**super().status(), "reason": self.reason}

    def body(self) -> tuple[bytes, str]:
        """Return the response body and its content type."""
        return (self.message + "\n").encode("utf-8", "backslashreplace"), "text/plain; charset=utf-8"


def printable(value):
    r"""Return a JSON value whose strings all encode as UTF-8 (lone surrogates become their escapes).

    Example:
        >>> printable({"message": "pods " + chr(0xD800)})
        {'message': 'pods \\ud800'}
    """
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [printable(v) for v in value]
    return value


def _details(res: Resource | None, name: str | None) -> dict:
    """Return Status details naming the object."""
    out: dict = {}
    if name:
        out["name"] = name
    if res is not None:
        if res.group:
            out["group"] = res.group
        out["kind"] = res.plural
    return out


def not_found(res: Resource, name: str) -> ApiError:
    """Return a 404 for a missing object, e.g. `deployments.apps "geo" not found`."""
    return ApiError(404, "NotFound", f'{res.key} "{name}" not found', _details(res, name))


def already_exists(res: Resource, name: str) -> ApiError:
    """Return a 409 for a create of an existing name."""
    return ApiError(409, "AlreadyExists", f'{res.key} "{name}" already exists', _details(res, name))


def conflict(res: Resource, name: str) -> ApiError:
    """Return a 409 for an update with a stale resourceVersion."""
    msg = (f'Operation cannot be fulfilled on {res.key} "{name}": the object has been modified; '
           "please apply your changes to the latest version and try again")
    return ApiError(409, "Conflict", msg, _details(res, name))


def invalid(kind: str, group: str, name: str, causes: list[tuple[str, str]]) -> ApiError:
    """Return a 422 listing (field, message) causes, rendered by kubectl as `The Kind "name" is invalid: ...`."""
    qualified = f"{kind}.{group}" if group else kind
    text = ", ".join(f"{field}: {msg}" for field, msg in causes)
    details = {"name": name, "kind": kind, "causes": [
        {"reason": "FieldValueInvalid", "message": msg, "field": field} for field, msg in causes]}
    if group:
        details["group"] = group
    return ApiError(422, "Invalid", f'{qualified} "{name}" is invalid: {text}', details)


def bad_request(message: str) -> ApiError:
    """Return a 400 with a message kubectl prints verbatim."""
    return ApiError(400, "BadRequest", message)


def method_not_allowed(message: str) -> ApiError:
    """Return a 405 for a verb a resource does not support."""
    return ApiError(405, "MethodNotAllowed", message)


def forbidden(user: str, verb: str, res: Resource | None, resource: str, group: str, namespace: str,
              name: str = "") -> ApiError:
    """Return a 403 in the RBAC authorizer's wording."""
    subject = f'{res.key if res else resource} "{name}"' if name else (res.key if res else resource)
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    msg = (f'{subject} is forbidden: User "{user}" cannot {verb} resource "{resource}" '
           f'in API group "{group}" {scope}')
    return ApiError(403, "Forbidden", msg, _details(res, name) if res else {"kind": resource})

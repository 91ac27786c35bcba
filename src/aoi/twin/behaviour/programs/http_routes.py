"""What the apps' HTTP servers answer: HotelReservation's frontend, the demo's frontend, nginx-thrift, and defaults."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from aoi.twin.behaviour.programs.mongo_docs import HOTELS

GO_404 = "404 page not found\n"
NGINX_404 = ("<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1>"
             "</center>\r\n<hr><center>openresty/1.15.8.1rc1</center>\r\n</body>\r\n</html>\r\n")
REASONS = {200: "OK", 301: "Moved Permanently", 302: "Found", 400: "Bad Request", 403: "Forbidden",
           404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error", 503: "Service Unavailable"}


@dataclass
class Request:
    """One HTTP request as a server sees it."""

    twin: object
    pod: dict | None
    app: object
    component: str
    method: str
    path: str
    query: str
    body: str
    headers: dict = field(default_factory=dict)
    now: float = 0.0

    def arg(self, name: str) -> str:
        """Return a query (or form) parameter ("" when absent)."""
        values = parse_qs(self.query).get(name) or parse_qs(self.body).get(name) or [""]
        return values[0]


@dataclass
class Response:
    """An HTTP response."""

    status: int
    body: str = ""
    content_type: str = "text/plain; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)

    @property
    def reason(self) -> str:
        return REASONS.get(self.status, "")


def text(status: int, body: str, content_type: str = "text/plain; charset=utf-8", **headers) -> Response:
    """Return a response with extra headers given as keyword arguments (underscores become dashes)."""
    return Response(status, body, content_type, [(k.replace("_", "-"), v) for k, v in headers.items()])


def as_json(status: int, doc, content_type: str = "application/json") -> Response:
    """Return a JSON response (Go's encoder ends it with a newline)."""
    return Response(status, json.dumps(doc, separators=(",", ":")) + "\n", content_type)


def hotel_frontend(req: Request, serve) -> Response:
    """HotelReservation's frontend: static index, /hotels, /recommendations, /user, /reservation."""
    cors = [("Access-Control-Allow-Origin", "*")]
    if req.path in ("/", "/index.html"):
        return text(200, "<!DOCTYPE html>\n<html>\n<head><title>Hotel Reservation</title></head>\n<body>\n"
                         "<div id=\"map\"></div>\n<script src=\"/javascripts/main.js\"></script>\n</body>\n</html>\n",
                    "text/html; charset=utf-8")
    need = {"/hotels": ["inDate", "outDate", "lat", "lon"], "/recommendations": ["require", "lat", "lon"],
            "/user": ["username", "password"], "/reservation": ["inDate", "outDate", "hotelId", "customerName",
                                                                 "username", "password", "number"]}.get(req.path)
    if need is None:
        return text(404, GO_404)
    missing = [n for n in need if not req.arg(n)]
    if missing:
        return Response(400, _hotel_missing(req.path, missing[0]) + "\n", headers=cors)
    method = "POST" if req.path == "/reservation" else "GET"
    failed = serve(f"HTTP {method} {req.path}")
    if failed:
        return Response(500, failed + "\n", headers=cors)
    return Response(200, json.dumps(_hotel_body(req), separators=(",", ":")) + "\n", headers=cors)


def _hotel_missing(path: str, name: str) -> str:
    if name in ("inDate", "outDate"):
        return "Please specify inDate/outDate params"
    if name in ("lat", "lon"):
        return "Please specify location params"
    if path == "/recommendations":
        return "Please specify require params"
    return "Please specify username and password" if path == "/user" else "Please specify hotelId params"


def _hotel_body(req: Request):
    if req.path == "/user":
        name, pwd = req.arg("username"), req.arg("password")
        n = name.removeprefix("Cornell_")
        good = n.isdigit() and pwd == n * 10
        return {"message": "Login successfully!" if good else "Failed. Please check your username and password. "}
    if req.path == "/reservation":
        return {"message": "Reserve successfully!"}
    features = []
    for i, hotel in enumerate(HOTELS[:5]):
        features.append({"type": "Feature", "id": str(i + 1), "properties": {"name": hotel[0],
                                                                             "phone_number": hotel[4]},
                         "geometry": {"type": "Point", "coordinates": [round(-122.41 + i * 0.0018, 4),
                                                                       round(37.7835 + i * 0.0021, 4)]}})
    return {"type": "FeatureCollection", "features": features}


def nginx_thrift(req: Request, serve) -> Response:
    """SocialNetwork's nginx-thrift: the wrk2 API routes (Lua calling the Thrift services)."""
    server = [("Server", "openresty/1.15.8.1rc1")]
    routes = {"/wrk2-api/post/compose": "Successfully upload post\n", "/wrk2-api/home-timeline/read": "[]\n",
              "/wrk2-api/user-timeline/read": "[]\n", "/wrk2-api/user/register": "Success!\n",
              "/wrk2-api/user/follow": "Success!\n"}
    if req.path in ("/", "/index.html"):
        return Response(200, "<!DOCTYPE html>\n<html>\n<head><title>Social Network</title></head>\n<body></body>\n"
                             "</html>\n", "text/html", server)
    if req.path not in routes:
        return Response(404, NGINX_404, "text/html", server)
    failed = serve(req.path)
    if failed:
        return Response(500, f"{failed}\n", "text/plain", server)
    return Response(200, routes[req.path], "text/plain", server)


def _products(req: Request) -> list[dict]:
    cm = req.twin.get("configmaps", req.pod["metadata"]["namespace"], "product-catalog-products") if req.pod else None
    try:
        return json.loads(((cm or {}).get("data") or {}).get("products.json", "{}")).get("products", [])
    except ValueError:
        return []


def demo_frontend(req: Request, serve) -> Response:
    """The demo's Next.js frontend: pages and /api routes."""
    routes = {"/": "GET /", "/api/products": "GET /api/products/[productId]", "/api/data": "GET /api/data",
              "/api/recommendations": "GET /api/recommendations", "/api/cart": f"{req.method} /api/cart",
              "/api/checkout": "POST /api/checkout"}
    route = next((r for r in sorted(routes, key=len, reverse=True) if req.path == r or
                  (r != "/" and req.path.startswith(r + "/"))), None)
    if route is None:
        return text(404, "<!DOCTYPE html><html><head><title>404: This page could not be found</title></head>"
                         "<body></body></html>", "text/html; charset=utf-8")
    failed = serve(routes[route])
    if failed:
        return as_json(500, {"error": failed})
    if route == "/":
        return text(200, "<!DOCTYPE html><html><head><title>OTel demo</title></head><body><div id=\"__next\">"
                         "</div></body></html>", "text/html; charset=utf-8")
    products = _products(req)
    if req.path.startswith("/api/products/"):
        found = next((p for p in products if p["id"] == req.path.rsplit("/", 1)[-1]), None)
        return as_json(200, found) if found else as_json(404, {"message": "Product Not Found"})
    body = {"/api/products": products, "/api/recommendations": products[:4], "/api/cart": {"userId": "",
            "items": []}, "/api/data": [{"redirectUrl": "/product/2ZYFJ3GM2N", "text": "Roof Binoculars for sale. "
                                                                                       "50% off."}],
            "/api/checkout": {"orderId": "00000000-0000-0000-0000-000000000000"}}[route]
    return as_json(200, body)

#!/usr/bin/env python3
"""A Keystone v3 stand-in for the real openstack client's identity look-ups.

openstack resolves `--project NAME` with Keystone (GET /v3/projects/NAME) before it calls
the compute API; with `--os-auth-type admin_token` that look-up goes to the compute endpoint,
which has no /projects (nor has Nova's), so the client stops. This answers what a Keystone
holding every project would: a password token whose catalog points at the compute endpoint
given (the token is `admin`, noauth2's administrator), and any project id as existing.

    keystone-standin.py COMPUTE_ENDPOINT PORT_FILE     # listens on 127.0.0.1, a free port
                                                       # written to PORT_FILE
Standard library only. Not a Keystone: no users, no checks, no persistence.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMPUTE = sys.argv[1]
DOMAIN = {"id": "default", "name": "Default"}


def base(handler):
    return "http://%s:%d" % handler.server.server_address[:2]


def version(handler):
    return {"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
            "links": [{"rel": "self", "href": base(handler) + "/v3/"}],
            "media-types": [{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}]}


def endpoint(kind, name, url):
    return {"id": kind, "type": kind, "name": name,
            "endpoints": [{"id": kind + "-public", "interface": "public", "region": "RegionOne", "region_id": "RegionOne", "url": url}]}


def token(handler):
    return {"token": {
        "methods": ["password"], "issued_at": "2026-01-01T00:00:00.000000Z", "expires_at": "2099-01-01T00:00:00.000000Z",
        "user": {"id": "admin", "name": "admin", "domain": DOMAIN, "password_expires_at": None},
        "project": {"id": "admin", "name": "admin", "domain": DOMAIN},
        "roles": [{"id": "admin", "name": "admin"}],
        "catalog": [endpoint("compute", "nova", COMPUTE), endpoint("identity", "keystone", base(handler) + "/v3")]}}


def project(handler, pid):
    return {"project": {"id": pid, "name": pid, "domain_id": "default", "enabled": True, "description": "", "is_domain": False,
                        "parent_id": "default", "tags": [], "links": {"self": "%s/v3/projects/%s" % (base(handler), pid)}}}


class Handler(BaseHTTPRequestHandler):
    def answer(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "":
            self.answer(300, {"versions": {"values": [version(self)]}})
        elif path == "/v3":
            self.answer(200, {"version": version(self)})
        elif path == "/v3/auth/tokens":
            self.answer(200, token(self), {"X-Subject-Token": "admin"})
        elif path.startswith("/v3/projects/"):
            self.answer(200, project(self, path[len("/v3/projects/"):]))
        else:
            self.answer(404, {"error": {"code": 404, "title": "Not Found", "message": "not in the stand-in: " + self.path}})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") == "/v3/auth/tokens":
            self.answer(201, token(self), {"X-Subject-Token": "admin"})
        else:
            self.answer(404, {"error": {"code": 404, "title": "Not Found", "message": "not in the stand-in: " + self.path}})

    def log_message(self, fmt, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[2], "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()

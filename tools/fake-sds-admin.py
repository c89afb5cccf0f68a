#!/usr/bin/env python3
"""A strict fake of SDS's console (sds-admin) for the agent's tests in every
language. Python 3 standard library only. It answers and stores as the
console as it ships does (../shared/SDS-ADMIN.md, "What the shipped console
does (measured)").

Run: python3 tools/fake-sds-admin.py [--port N] [--app JSON]
                                     [--tls-cert FILE --tls-key FILE
                                      [--tls-client-ca FILE]]
(--app takes the body of POST /_fake/app below, to start with an app.)
It listens on 127.0.0.1 (a free port unless --port), prints the port alone
on its first stdout line, and exits when its stdin reaches end of file (so a
test that dies takes it along: start it with a pipe as stdin). A test may
freeze it with SIGSTOP and thaw it with SIGCONT (a console in a long GC): the
kernel still accepts connections and queues requests meanwhile, and the fake
processes every one of them after SIGCONT, as the console does.

With --tls-cert and --tls-key (PEM, e.g. from tools/test-pki.sh) it speaks
HTTPS only, control side included: the handshake is done on each
connection's own thread, and a client that refuses the certificate is
dropped quietly (that is what the tests provoke). With --tls-client-ca too
it requires a client certificate signed by that CA (mutual TLS), the control
side included; a client without one is dropped at the handshake.

The protocol side (../shared/SDS-ADMIN.md), checked strictly:
  POST /sds/heartbeat/pullstrategy and POST /sds/heartbeat/add only;
  Content-Type application/x-www-form-urlencoded; a body of exactly one form
  field `client` holding a JSON object with exactly the request's fields and
  their types (pull: appGroupName, appName, ip, hostname: strings, version:
  integer or null, pointList: list of strings; add: the four strings,
  statisticsCycleTime: integer multiple of 10000, pointInfoMap: point name ->
  {point (= the key), visitNum, exceptionNum, timeoutNum, downgradeNum,
  concurrentNum: integers >= 0}); appGroupName, appName and ip not blank, ip
  at most 16 characters. Anything else is answered 400 and recorded as a
  violation. A valid request is recorded, then answered as the failure mode
  of its endpoint says.

  Pull ("ok" mode), as the console's checkAndGetNewestPointStrategy: an app
  the control side never set is answered with errorMsg. Otherwise the
  request's version is compared with the app's as Java's Objects.equals does
  (null equals only null): equal: {"changed": false, "version": null,
  "strategies": null}; else {"changed": true, "version": the app's (null for
  an app set with "nullVersion"), "strategies": the app's whole list, or null
  when the list is empty (no enabled strategy)}; "sdsSchemeName" always.
  Every answer has the five fields of the console's HeartBeatResponse
  ("sdsSchemeName", "changed", "version", "strategies", "errorMsg"), null
  where not set, as the console writes them (an error and an upload too).

  Upload ("ok" mode), as the console's saveRecord: an unknown app is
  answered with errorMsg and nothing is stored; else the answer's fields
  are all null whatever happens below. Every processed upload is
  stored, so a cycle sent twice is stored twice:
    - points with visitNum 0 are not stored; no point with visits: nothing
      happens at all;
    - the visited names the console has not seen since it started go into
      the app's point list: it asks a filter in its own memory first
      (PointDictServiceImpl.checkExist, a Bloom filter keyed by group + app +
      name run together), so a name deleted from the list below, or whose
      insert failed, is never listed again until the console restarts (a
      new fake); a new name longer than 200 UTF-16 units fails that insert:
      nothing more of the upload happens;
    - one row per visited point is inserted in one batch; one name longer
      than 164 UTF-16 units (the VARCHAR(164) column) fails the whole batch:
      no row of that upload is stored, silently;
    - then every name of the app's point list missing from the upload's
      pointInfoMap (zero-visit points count as present) is deleted from it.

The control side (JSON bodies and answers):
  POST /_fake/app {"appGroupName": g, "appName": a, "strategies": [...],
                   "nullVersion": bool (optional)}
      replaces the app's strategy list (SdsStrategy objects, sent as given,
      returnValueStr included) and bumps its version (1 for a new app);
      "strategiesJson": TEXT instead of "strategies" gives the list as JSON
      text sent verbatim (values Python's json cannot carry: 1e400,
      duplicated keys, 1.0000000000000000001);
      answers {"version": n}. "nullVersion": true makes the version null
      from then on (the shipped H2 schema: null + 1 stays null; answers
      {"version": null}); "nullVersion": false gives it a number again.
  POST /_fake/mode {"pull": MODE, "add": MODE} (either key) sets how that
      endpoint answers from now on; answers both modes. MODE is one of
      ok            the console's answer (above)
      unknown_app   200 {"errorMsg": "app ... does not exist"}
      http_500      500 with a short text body
      malformed     200 with a body that is not JSON
      wrong_types   200 with {"changed": "yes", "version": "seven", "strategies": {}}
                    (a pull) or {"errorMsg": 42} (an upload)
      huge          200 with a 10 MB JSON body
      hang          never answers (holds the connection until the mode changes)
      close         closes the connection without an answer
  GET /_fake/requests answers {"pulls": [...], "uploads": [...],
      "violations": [...], "stored": [...], "points": {...}}: each pull/upload
      {"time": epoch seconds, "request": the decoded JSON} (every valid
      request received, whatever the mode), each violation {"time",
      "method", "path", "reason"}; "stored": the rows of the console's
      heartbeat table in insertion order, each {"appGroupName", "appName",
      "ip", "statisticsCycleTime", "point", "visitNum", "exceptionNum",
      "timeoutNum", "downgradeNum", "maxConcurrentNum"}; "points": each app's
      point list, "group/app" -> sorted names.
  POST /_fake/reset forgets the recorded requests, violations and stored
      rows (the apps, their point lists and the names seen stay).
"""

import argparse
import json
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

PULL = "/sds/heartbeat/pullstrategy"
ADD = "/sds/heartbeat/add"
FORM = "application/x-www-form-urlencoded"
IDENTITY = {"appGroupName", "appName", "ip", "hostname"}
PULL_FIELDS = IDENTITY | {"version", "pointList"}
ADD_FIELDS = IDENTITY | {"statisticsCycleTime", "pointInfoMap"}
CYCLE_FIELDS = {"point", "visitNum", "exceptionNum", "timeoutNum", "downgradeNum", "concurrentNum"}
MODES = {"ok", "unknown_app", "http_500", "malformed", "wrong_types", "huge", "hang", "close"}
HUGE_BYTES = 10 * 1024 * 1024


class Violation(Exception):
    pass


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.apps = {}  # (group, name) -> {"version": int, "strategies": list}
        self.modes = {"pull": "ok", "add": "ok"}
        self.pulls = []
        self.uploads = []
        self.violations = []
        self.stored = []  # heartbeat rows
        self.point_lists = {}  # (group, name) -> set of point names
        self.names_seen = set()  # group + app + point, as the console's filter keys them


STATE = State()


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_request(path, obj):
    """Raises Violation unless obj is exactly the request of path."""
    if not isinstance(obj, dict):
        raise Violation("the client field is not a JSON object")
    fields = PULL_FIELDS if path == PULL else ADD_FIELDS
    if set(obj) != fields:
        raise Violation(
            "fields %s, expected %s" % (sorted(obj), sorted(fields)))
    for key in IDENTITY:
        if not isinstance(obj[key], str):
            raise Violation("%s is not a string" % key)
    for key in ("appGroupName", "appName", "ip"):
        if not obj[key].strip():
            raise Violation("%s is blank" % key)
    if len(obj["ip"]) > 16:
        raise Violation("ip is longer than 16 characters")
    if path == PULL:
        if obj["version"] is not None and not is_int(obj["version"]):
            raise Violation("version is neither an integer nor null")
        points = obj["pointList"]
        if not isinstance(points, list) or not all(isinstance(p, str) for p in points):
            raise Violation("pointList is not a list of strings")
        return
    cycle = obj["statisticsCycleTime"]
    if not is_int(cycle) or cycle <= 0 or cycle % 10000 != 0:
        raise Violation("statisticsCycleTime is not a positive multiple of 10000")
    infos = obj["pointInfoMap"]
    if not isinstance(infos, dict):
        raise Violation("pointInfoMap is not an object")
    for name, info in infos.items():
        if not isinstance(info, dict) or set(info) != CYCLE_FIELDS:
            raise Violation("pointInfoMap[%r] does not have exactly %s" % (name, sorted(CYCLE_FIELDS)))
        if info["point"] != name:
            raise Violation("pointInfoMap[%r].point is %r" % (name, info["point"]))
        for key in CYCLE_FIELDS - {"point"}:
            if not is_int(info[key]) or info[key] < 0:
                raise Violation("pointInfoMap[%r].%s is not an integer >= 0" % (name, key))


class Server(ThreadingHTTPServer):
    daemon_threads = True
    tls = None  # an ssl.SSLContext in TLS mode

    def get_request(self):
        sock, address = self.socket.accept()
        if self.tls is not None:
            # The handshake waits for Handler.setup, on the request's thread,
            # so one slow or refusing client does not hold up the others.
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ssl.SSLError, ConnectionError)):
            return  # a client that refused our certificate, or hung up
        super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        if isinstance(self.connection, ssl.SSLSocket):
            self.connection.do_handshake()

    def log_message(self, *args):
        pass

    def body(self):
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise Violation("no Content-Length")
        return self.rfile.read(int(length))

    def answer(self, status, payload, content_type="application/json"):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def console_reply(self, payload):
        """A 200 as the console sends it: chunked, its JSON in raw UTF-8 (the
        scheme name is Chinese), content type with the charset."""
        data = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        half = len(data) // 2  # two chunks, so a reader must join them
        for part in [p for p in (data[:half], data[half:]) if p] + [b""]:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))

    def violation(self, reason):
        with STATE.lock:
            STATE.violations.append({
                "time": time.time(), "method": self.command, "path": self.path, "reason": reason})
        self.answer(400, {"errorMsg": "fake-sds-admin: " + reason})

    def do_GET(self):
        if self.path == "/_fake/requests":
            with STATE.lock:
                self.answer(200, {
                    "pulls": STATE.pulls, "uploads": STATE.uploads, "violations": STATE.violations,
                    "stored": STATE.stored,
                    "points": {"%s/%s" % key: sorted(names) for key, names in STATE.point_lists.items()}})
        else:
            self.violation("method GET")

    def do_PUT(self):
        self.violation("method PUT")

    def do_DELETE(self):
        self.violation("method DELETE")

    def do_POST(self):
        if self.path.startswith("/_fake/"):
            return self.control()
        try:
            if self.path not in (PULL, ADD):
                raise Violation("unknown path")
            media = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if media != FORM:
                raise Violation("Content-Type %r" % self.headers.get("Content-Type"))
            text = self.body().decode("utf-8")
            try:
                form = parse_qs(text, keep_blank_values=True, strict_parsing=True)
            except ValueError as e:
                raise Violation("form encoding: %s" % e)
            if list(form) != ["client"] or len(form["client"]) != 1:
                raise Violation("form fields %s, expected one 'client'" % sorted(form))
            try:
                obj = json.loads(form["client"][0])
            except ValueError as e:
                raise Violation("client is not JSON: %s" % e)
            check_request(self.path, obj)
        except (Violation, UnicodeDecodeError) as e:
            return self.violation(str(e))
        endpoint = "pull" if self.path == PULL else "add"
        with STATE.lock:
            (STATE.pulls if endpoint == "pull" else STATE.uploads).append(
                {"time": time.time(), "request": obj})
            mode = STATE.modes[endpoint]
        self.fail_or_answer(endpoint, mode, obj)

    def fail_or_answer(self, endpoint, mode, obj):
        if mode == "ok":
            self.console_reply(pull_answer(obj) if endpoint == "pull" else save_upload(obj))
        elif mode == "unknown_app":
            self.console_reply(unknown_app(obj))
        elif mode == "http_500":
            self.answer(500, b"fake-sds-admin: internal error", "text/plain")
        elif mode == "malformed":
            self.answer(200, b'{"changed": true, "version": 3, "strategies": [')
        elif mode == "wrong_types":
            if endpoint == "pull":
                self.answer(200, {"changed": "yes", "version": "seven", "strategies": {}})
            else:
                self.answer(200, {"errorMsg": 42})
        elif mode == "huge":
            self.send_huge()
        elif mode == "hang":
            with STATE.lock:
                STATE.changed.wait_for(lambda: STATE.modes[endpoint] != "hang", timeout=60)
            self.close_now()
        elif mode == "close":
            self.close_now()

    def send_huge(self):
        chunk = b" " * 65536
        head = b'{"errorMsg": null, "pad": "'
        tail = b'"}'
        total = len(head) + HUGE_BYTES + len(tail)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(total))
        self.end_headers()
        try:
            self.wfile.write(head)
            for _ in range(HUGE_BYTES // len(chunk)):
                self.wfile.write(chunk)
            self.wfile.write(tail)
        except OSError:
            pass  # the client stopped reading, as it should

    def close_now(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def control(self):
        try:
            request = json.loads(self.body() or b"{}")
        except (ValueError, Violation) as e:
            return self.answer(400, {"error": str(e)})
        with STATE.lock:
            if self.path == "/_fake/app":
                key = (request["appGroupName"], request["appName"])
                app = STATE.apps.setdefault(key, {"version": 0, "strategies": []})
                null_version = request.get("nullVersion")
                if null_version is True:
                    app["version"] = None
                elif null_version is False and app["version"] is None:
                    app["version"] = 1
                elif app["version"] is not None:
                    app["version"] += 1
                app["strategies"] = request.get("strategies", [])
                app["raw"] = request.get("strategiesJson")
                answer = {"version": app["version"]}
            elif self.path == "/_fake/mode":
                for endpoint in ("pull", "add"):
                    if endpoint in request:
                        if request[endpoint] not in MODES:
                            return self.answer(400, {"error": "unknown mode %r" % request[endpoint]})
                        STATE.modes[endpoint] = request[endpoint]
                STATE.changed.notify_all()
                answer = dict(STATE.modes)
            elif self.path == "/_fake/reset":
                STATE.pulls.clear()
                STATE.uploads.clear()
                STATE.violations.clear()
                STATE.stored.clear()
                answer = {}
            else:
                return self.answer(404, {"error": "unknown control path"})
        self.answer(200, answer)


SCHEME = "默认降级预案"  # the shipped console's default scheme ("default downgrade plan")


def console_answer(**fields):
    """A HeartBeatResponse as the console writes it: its five fields always,
    null where not set (an upload's answer and an error too)."""
    answer = dict.fromkeys(("sdsSchemeName", "changed", "version", "strategies", "errorMsg"))
    answer.update(fields)
    return answer


def unknown_app(request):
    return console_answer(errorMsg="app %s/%s does not exist" % (request["appGroupName"], request["appName"]))


def pull_answer(request):
    with STATE.lock:
        app = STATE.apps.get((request["appGroupName"], request["appName"]))
        if app is None:
            return unknown_app(request)
        # Objects.equals(request version, app version): None equals None only.
        if request["version"] == app["version"] and (request["version"] is None) == (app["version"] is None):
            return console_answer(sdsSchemeName=SCHEME, changed=False)
        if app.get("raw") is not None:
            return ('{"sdsSchemeName": %s, "changed": true, "version": %s, "strategies": %s, "errorMsg": null}'
                    % (json.dumps(SCHEME, ensure_ascii=False), json.dumps(app["version"]), app["raw"])).encode()
        # The console sets the list only when the scheme has a strategy.
        return console_answer(sdsSchemeName=SCHEME, changed=True, version=app["version"],
                              strategies=app["strategies"] or None)


def java_length(text):
    """A string's length as Java (and H2's VARCHAR) counts it: UTF-16 units."""
    return len(text.encode("utf-16-le")) // 2


POINT_DICT_CHARS = 200  # point_dict.point VARCHAR(200)
HEARTBEAT_POINT_CHARS = 164  # heartbeat.point VARCHAR(164)


def save_upload(request):
    key = (request["appGroupName"], request["appName"])
    with STATE.lock:
        if key not in STATE.apps:
            return unknown_app(request)
        infos = request["pointInfoMap"]
        visited = [info for info in infos.values() if info["visitNum"] > 0]
        if not visited:
            return console_answer()
        # Each insert is one batch: one name too long fails it whole, and
        # the console only logs the exception.
        points = STATE.point_lists.setdefault(key, set())
        new = []
        for info in visited:
            seen = key[0] + key[1] + info["point"]
            if seen not in STATE.names_seen:
                STATE.names_seen.add(seen)
                if info["point"] not in points:
                    new.append(info["point"])
        if any(java_length(name) > POINT_DICT_CHARS for name in new):
            return console_answer()
        points.update(new)
        if any(java_length(info["point"]) > HEARTBEAT_POINT_CHARS for info in visited):
            return console_answer()
        for info in visited:
            STATE.stored.append({
                "appGroupName": key[0], "appName": key[1], "ip": request["ip"],
                "statisticsCycleTime": request["statisticsCycleTime"], "point": info["point"],
                "visitNum": info["visitNum"], "exceptionNum": info["exceptionNum"],
                "timeoutNum": info["timeoutNum"], "downgradeNum": info["downgradeNum"],
                "maxConcurrentNum": info["concurrentNum"]})
        points.intersection_update(infos.keys())
        return console_answer()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--app", help="an app to start with, as the body of POST /_fake/app")
    parser.add_argument("--tls-cert", help="PEM certificate (chain): serve HTTPS")
    parser.add_argument("--tls-key", help="PEM private key of --tls-cert")
    parser.add_argument("--tls-client-ca", help="PEM CA that client certificates must chain to (mutual TLS)")
    args = parser.parse_args()
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    if args.tls_client_ca and not args.tls_cert:
        parser.error("--tls-client-ca needs --tls-cert and --tls-key")
    if args.app:
        app = json.loads(args.app)
        STATE.apps[(app["appGroupName"], app["appName"])] = {
            "version": None if app.get("nullVersion") else 1, "strategies": app.get("strategies", [])}
    server = Server(("127.0.0.1", args.port), Handler)
    if args.tls_cert:
        server.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server.tls.load_cert_chain(args.tls_cert, args.tls_key)
        if args.tls_client_ca:
            server.tls.verify_mode = ssl.CERT_REQUIRED
            server.tls.load_verify_locations(args.tls_client_ca)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # until the test closes our stdin or dies
    server.shutdown()


if __name__ == "__main__":
    main()

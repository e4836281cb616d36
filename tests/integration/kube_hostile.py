#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""kube_hostile.py — a proxy in front of kubesim that plays a broken or
hostile API server for one resource.

  kube_hostile.py PORT UPSTREAM MODE RESOURCE

Listens on 127.0.0.1:PORT (HTTP/1.1) and passes every request to UPSTREAM
(http://127.0.0.1:N, a kubesim), streaming watch bodies, except for the
collection /api/v1/RESOURCE or /apis/GROUP/VERSION/RESOURCE, where MODE says:
  bad       a LIST page gets two more items that no JSON parser built on
            cJSON accepts (an annotation with a lone \\udcff escape, and a
            field nested 1100 levels deep); a WATCH starts with an ADDED
            event of an object with such an annotation (named bad-event, at
            the watch's own resourceVersion), then passes the real stream
  gone      every WATCH is answered at once with HTTP 410 (a Status Expired)
  samecont  every LIST page says continue "again" (a continued page too):
            the list never ends
Each request to that collection is printed on stdout as "REQ LIST" or
"REQ WATCH" (flushed), others are not. Prints "ready" once listening.
"""
import http.client
import http.server
import json
import sys
import urllib.parse

PORT = int(sys.argv[1])
UP = urllib.parse.urlsplit(sys.argv[2])
MODE = sys.argv[3]
RESOURCE = sys.argv[4]

BAD_ANNOTATION = ('{"metadata":{"name":"bad-lone","namespace":"default","resourceVersion":"1",'
                  '"annotations":{"x":"\\udcff"}},"spec":{"ports":[{"port":80}]}}')
BAD_DEEP = ('{"metadata":{"name":"bad-deep","namespace":"default","resourceVersion":"1"},'
            '"spec":{"x":' + "[" * 1100 + "]" * 1100 + '}}')


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def ours(self):
        path = urllib.parse.urlsplit(self.path).path
        return path.rstrip("/").split("/")[-1] == RESOURCE

    def reply(self, code, body, ctype="application/json"):
        b = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def chunk(self, b):
        if b:
            self.wfile.write(b"%x\r\n" % len(b) + b + b"\r\n")
            self.wfile.flush()

    def do_GET(self):
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        watch = q.get("watch", ["0"])[0] in ("1", "true")
        ours = self.ours()
        if ours:
            print("REQ", "WATCH" if watch else "LIST", flush=True)
        if ours and watch and MODE == "gone":
            return self.reply(410, json.dumps({
                "kind": "Status", "apiVersion": "v1", "status": "Failure",
                "reason": "Expired", "code": 410,
                "message": "too old resource version"}))
        conn = http.client.HTTPConnection(UP.hostname, UP.port, timeout=700)
        up_path = self.path
        if ours and MODE == "samecont" and "continue" in q:
            parts = urllib.parse.urlsplit(self.path)
            kept = [(k, v) for k, vs in q.items() for v in vs if k != "continue"]
            up_path = parts.path + "?" + urllib.parse.urlencode(kept)
        hdrs = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "accept")}
        conn.request("GET", up_path, headers=hdrs)
        resp = conn.getresponse()
        if not watch or resp.status != 200:
            body = resp.read()
            if ours and resp.status == 200 and MODE in ("bad", "samecont"):
                doc = json.loads(body)
                if MODE == "samecont":
                    doc.setdefault("metadata", {})["continue"] = "again"
                    body = json.dumps(doc).encode()
                else:
                    text = json.dumps(doc)
                    items = doc.get("items") or []
                    if items:
                        body = text.replace('"items": [', '"items": [' + BAD_ANNOTATION + ", " +
                                            BAD_DEEP + ", ", 1).encode()
                    else:
                        body = text.replace('"items": []', '"items": [' + BAD_ANNOTATION + ", " +
                                            BAD_DEEP + "]", 1).encode()
            self.reply(resp.status, body, resp.getheader("Content-Type", "application/json"))
            conn.close()
            return
        self.send_response(200)
        self.send_header("Content-Type", resp.getheader("Content-Type", "application/json"))
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            if ours and MODE == "bad":
                rv = q.get("resourceVersion", ["1"])[0] or "1"
                ev = ('{"type":"ADDED","object":{"kind":"Service","apiVersion":"v1","metadata":'
                      '{"name":"bad-event","namespace":"default","resourceVersion":"%s",'
                      '"annotations":{"x":"\\udcff"}},"spec":{"ports":[{"port":80}]}}}\n' % rv)
                self.chunk(ev.encode())
            while True:
                b = resp.read1(65536)
                if not b:
                    break
                self.chunk(b)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            pass
        conn.close()


class S(http.server.ThreadingHTTPServer):
    daemon_threads = True


srv = S(("127.0.0.1", PORT), H)
print("ready", flush=True)
srv.serve_forever()
